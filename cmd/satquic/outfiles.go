package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// plotToFile tells a --plot file (FILE.png) from a directory.
func plotToFile(p string) bool { return strings.EqualFold(filepath.Ext(p), ".png") }

// writeOutput creates path and writes it with fn; an empty path writes
// nothing. A failed write names the file.
func writeOutput(path string, fn func(io.Writer) error) error {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
