package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
)

// sink is where one download goes: stdout, nowhere, or a temporary file
// beside its final name, renamed into place once the body arrived whole.
// An existing file of that name stays as it was until then, and is kept
// when the download fails.
type sink struct {
	w    io.Writer
	buf  *bufio.Writer
	file *os.File
	// final is the name the file takes on success.
	final string
}

// openOutputs creates the outputs before anything is sent, so that a bad
// -o costs no connection.
func (o *getOptions) openOutputs(files []*getFile, stdout io.Writer) ([]sink, error) {
	sinks := make([]sink, len(files))
	if len(files) == 1 {
		switch {
		case o.out == "" && o.jsonOut:
			sinks[0] = sink{w: io.Discard}
			return sinks, nil
		case o.out == "" || o.out == "-":
			sinks[0] = sink{w: stdout}
			return sinks, nil
		}
		if fi, err := os.Stat(o.out); err == nil && fi.IsDir() {
			// One URL into a directory: named as with several.
			return o.createInDir(files)
		}
		s, err := createPart(o.out)
		if err != nil {
			return nil, fmt.Errorf("%w: -o: %v", errUsage, err)
		}
		sinks[0] = s
		return sinks, nil
	}
	if o.out == "" || o.out == "-" {
		return nil, fmt.Errorf("%w: several URLs need -o DIR", errUsage)
	}
	if fi, err := os.Stat(o.out); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%w: -o %s is a file, and several URLs need a directory", errUsage, o.out)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return nil, fmt.Errorf("%w: -o: %v", errUsage, err)
	}
	return o.createInDir(files)
}

// createInDir opens a temporary file per URL in the directory -o names,
// each to be renamed after the last element of its URL's path.
func (o *getOptions) createInDir(files []*getFile) ([]sink, error) {
	sinks := make([]sink, len(files))
	seen := map[string]bool{}
	for i, f := range files {
		name := path.Base(f.path)
		if name == "/" || name == "." || name == "" {
			name = "index.html"
		}
		if seen[name] {
			discardOutputs(sinks[:i])
			return nil, fmt.Errorf("%w: two URLs would both write %s", errUsage, name)
		}
		seen[name] = true
		s, err := createPart(filepath.Join(o.out, name))
		if err != nil {
			discardOutputs(sinks[:i])
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		sinks[i] = s
	}
	return sinks, nil
}

// createPart opens a new temporary file in final's directory: a rename
// within one file system replaces final at once, never half-written.
func createPart(final string) (sink, error) {
	dir, base := filepath.Split(final)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".part-*")
	if err != nil {
		return sink{}, err
	}
	b := bufio.NewWriterSize(f, 1<<20)
	return sink{w: b, buf: b, file: f, final: final}, nil
}

// closeOutputs flushes and closes the output files, renames those whose
// download completed into place and removes the temporary files of the
// others. files[i].Output names the file a download produced, or is empty.
func closeOutputs(files []*getFile, sinks []sink) error {
	var errs []error
	for i, s := range sinks {
		if s.file == nil {
			continue
		}
		if !files[i].done {
			discardOutputs(sinks[i : i+1])
			continue
		}
		err := errors.Join(s.buf.Flush(), s.file.Close())
		if err == nil {
			err = os.Rename(s.file.Name(), s.final)
		}
		if err != nil {
			_ = os.Remove(s.file.Name())
			errs = append(errs, fmt.Errorf("writing %s: %w", s.final, err))
			continue
		}
		files[i].Output = s.final
	}
	return errors.Join(errs...)
}

// discardOutputs closes and removes temporary files: nothing of them
// remains, and no file that was there before is touched.
func discardOutputs(sinks []sink) {
	for _, s := range sinks {
		if s.file != nil {
			_ = s.file.Close()
			_ = os.Remove(s.file.Name())
		}
	}
}
