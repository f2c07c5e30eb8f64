package main

import (
	"path"
	"strings"
)

// hqRequestPath reads an hq-interop request, "GET /path" and a line end,
// and returns the path relative to the served directory.
func hqRequestPath(req string) (string, bool) {
	line := strings.TrimRight(req, "\r\n ")
	p, ok := strings.CutPrefix(line, "GET /")
	if !ok || strings.ContainsAny(p, "\r\n") {
		return "", false
	}
	p = path.Clean("/" + p)[1:]
	return p, p != ""
}

func truncate(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
