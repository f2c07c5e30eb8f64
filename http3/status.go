package http3

import (
	"net/http"
	"strconv"
)

// statusLines holds the Status text of a response ("200 OK") for every
// valid code, made once: building it for each response cost a client two
// allocations per request.
var statusLines = func() (t [600]string) {
	for code := 100; code < len(t); code++ {
		t[code] = formatStatusLine(code)
	}
	return t
}()

// statusLine returns a response's Status text for its code, as net/http's
// client gives it.
func statusLine(code int) string {
	if code >= 100 && code < len(statusLines) {
		return statusLines[code]
	}
	return formatStatusLine(code)
}

func formatStatusLine(code int) string { return strconv.Itoa(code) + " " + http.StatusText(code) }
