package main

import (
	"path/filepath"
	"strings"
)

// plotToFile tells a --plot file (FILE.png) from a directory.
func plotToFile(p string) bool { return strings.EqualFold(filepath.Ext(p), ".png") }
