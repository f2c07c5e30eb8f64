package hq

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// ErrNotServed reports a path that names no regular file or directory.
var ErrNotServed = errors.New("not a regular file or directory")

// OpenServed opens name, a path relative to root, for a file server: a
// regular file, or a directory where dirs allows. root refuses any path
// that would resolve outside it, through ".." or a symbolic link. The file
// is opened without blocking, so that a FIFO (or a device) placed in the
// served directory is refused at once instead of holding the request, and
// an OS thread, until a writer comes; its type is checked on the opened
// file, so that nothing swapped in after a check is served.
func OpenServed(root *os.Root, name string, dirs bool) (*os.File, fs.FileInfo, error) {
	name = strings.TrimPrefix(name, "/")
	if name == "" {
		name = "."
	}
	f, err := root.OpenFile(name, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() && !(dirs && fi.IsDir()) {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w (%v)", name, ErrNotServed, fi.Mode().Type())
	}
	return f, fi, nil
}
