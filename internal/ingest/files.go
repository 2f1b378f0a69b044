package ingest

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ModelFiles returns the samples files one model's argument names, in the stable order they are
// read (sorted by path): a file is itself; a directory gives every file below it (hidden ones
// left out); a pattern with *, ? or [ gives the files it matches (filepath.Glob). It is an error
// when nothing is found.
func ModelFiles(arg string) ([]string, error) {
	if strings.ContainsAny(arg, "*?[") {
		if _, err := os.Stat(arg); err != nil { // a name that holds such a character is itself
			matches, err := filepath.Glob(arg)
			if err != nil {
				return nil, fmt.Errorf("pattern %q: %w", arg, err)
			}
			var files []string
			for _, m := range matches {
				if fi, err := os.Stat(m); err == nil && fi.Mode().IsRegular() {
					files = append(files, m)
				}
			}
			if len(files) == 0 {
				return nil, fmt.Errorf("pattern %q matches no file", arg)
			}
			slices.Sort(files)
			return files, nil
		}
	}
	fi, err := os.Stat(arg)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{arg}, nil
	}
	var files []string
	err = filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != arg && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("directory %s holds no file", arg)
	}
	slices.Sort(files)
	return files, nil
}
