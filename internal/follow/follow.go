// Package follow watches a training run's folder and adds each step file
// the trainer writes as a new checkpoint of a comparison, once the file is
// complete: `reach import --follow` (on the importing machine) and a
// comparison following a server folder from the browser (a River job, in
// folders an admin allows) share its scanning.
package follow

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/training"
)

// Limits on what an admin lists and on a followed folder.
const (
	MaxRoots     = 32       // allowed folders
	MaxPathBytes = 4096     // one path
	MaxRootsText = 64 << 10 // the setting's text
	MaxFiles     = 10_000   // files in a followed folder
)

// ParseRoots reads the allowed folders, one absolute path a line (blank
// lines and lines starting with # skipped), each an existing folder,
// returned cleaned and with symbolic links resolved. An error names the
// line.
func ParseRoots(text string) ([]string, error) {
	if len(text) > MaxRootsText {
		return nil, fmt.Errorf("the list is %d bytes; at most %d", len(text), MaxRootsText)
	}
	var roots []string
	for i, line := range strings.Split(text, "\n") {
		p := strings.TrimSpace(line)
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		if len(p) > MaxPathBytes {
			return nil, fmt.Errorf("line %d: a path of %d bytes; at most %d", i+1, len(p), MaxPathBytes)
		}
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("line %d: %q is not an absolute path (it starts with /)", i+1, p)
		}
		real, err := filepath.EvalSymlinks(filepath.Clean(p))
		if err != nil {
			return nil, fmt.Errorf("line %d: %s: %w", i+1, p, errors.Unwrap(err))
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("line %d: %s is not a folder", i+1, p)
		}
		if len(roots) == MaxRoots {
			return nil, fmt.Errorf("line %d: more than %d folders", i+1, MaxRoots)
		}
		if !slices.Contains(roots, real) {
			roots = append(roots, real)
		}
	}
	return roots, nil
}

// Resolve returns the folder path names, cleaned and with symbolic links
// resolved, when it lies inside one of roots (as ParseRoots returns them)
// and is a folder. Refused in words naming the allowed folders: no roots
// (following is off), a relative path, a path with a ".." part, and a
// path that is, or whose links lead, outside every root.
func Resolve(roots []string, path string) (string, error) {
	allowed := strings.Join(roots, ", ")
	switch {
	case len(roots) == 0:
		return "", errors.New("following a server folder is off: an admin lists the folders it may read (Admin › Server folders)")
	case len(path) > MaxPathBytes:
		return "", fmt.Errorf("a path of %d bytes; at most %d", len(path), MaxPathBytes)
	case !filepath.IsAbs(path):
		return "", fmt.Errorf("%q is not an absolute path: give the folder's full path inside %s", path, allowed)
	case slices.Contains(strings.Split(filepath.ToSlash(path), "/"), ".."):
		return "", fmt.Errorf("%q has a \"..\" part: give the folder's full path inside %s", path, allowed)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(path))
	if err != nil && !inside(roots, filepath.Clean(path)) {
		// The same answer as for an existing folder outside: the form does
		// not tell whether a path outside the roots exists.
		return "", fmt.Errorf("%s is outside the folders that may be followed (%s)", path, allowed)
	}
	if err != nil {
		return "", fmt.Errorf("%s: no such folder (the folders that may be followed are %s)", path, allowed)
	}
	if !inside(roots, real) {
		if real != filepath.Clean(path) {
			return "", fmt.Errorf("%s leads to %s, outside the folders that may be followed (%s)", path, real, allowed)
		}
		return "", fmt.Errorf("%s is outside the folders that may be followed (%s)", path, allowed)
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("%s is not a folder: give the folder the trainer writes its step files in", path)
	}
	return real, nil
}

// Within refuses a file of a followed folder that is, or whose links
// lead, outside every root: a step file may be a link too.
func Within(roots []string, file string) error {
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(file), errors.Unwrap(err))
	}
	if !inside(roots, real) {
		return fmt.Errorf("%s leads to %s, outside the folders that may be followed (%s): it is not read", file, real, strings.Join(roots, ", "))
	}
	return nil
}

// inside reports whether path (resolved) is one of roots or below one.
func inside(roots []string, path string) bool {
	for _, r := range roots {
		rel, err := filepath.Rel(r, path)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// Seen is a file as a look at the folder saw it.
type Seen struct {
	Size  int64     `json:"size"`
	Mod   time.Time `json:"mod"`
	Since time.Time `json:"since"` // when this size and time were first seen
}

// State is what the looks at a folder have seen: every step file, the
// first file of each step that was refused as it was then (tried again
// only once it changes), the step being added, and the steps that failed.
// It is JSON, kept between looks in the follow's row.
type State struct {
	Files   map[string]Seen `json:"files,omitempty"`
	Refused map[string]Seen `json:"refused,omitempty"`
	Adding  *Adding         `json:"adding,omitempty"`
	// Failed are the steps that did not go in, until they do
	// (store.FailedSteps reads them).
	Failed []store.FailedStep `json:"failed,omitempty"`
}

// Scan looks at the training run's folder arg (a folder, or a quoted
// pattern; root is the folder whose names below it may give steps, as
// training.StepOf reads them) and returns, steps ascending, the steps not
// in known whose files have all been unchanged (size and time) for settle
// by now, none of them refused as it is. A file still being written is
// thus not read half. Files that give no step are left alone.
func (s *State) Scan(arg, root string, known map[int]bool, now time.Time, settle time.Duration) ([]training.Checkpoint, error) {
	paths, err := ingest.ModelFiles(arg)
	if err != nil {
		return nil, err
	}
	if len(paths) > MaxFiles {
		return nil, fmt.Errorf("%s holds %d files; at most %d are followed", arg, len(paths), MaxFiles)
	}
	if s.Files == nil {
		s.Files = map[string]Seen{}
	}
	files := make(map[string]Seen, len(paths))
	steps := map[int][]string{}
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			continue // gone between the listing and now
		}
		cur := Seen{Size: fi.Size(), Mod: fi.ModTime(), Since: now}
		if old, ok := s.Files[p]; ok && old.Size == cur.Size && old.Mod.Equal(cur.Mod) {
			cur.Since = old.Since
		}
		files[p] = cur
		rel, err := filepath.Rel(root, p)
		if err != nil {
			rel = filepath.Base(p)
		}
		if step, ok := training.StepOf(rel); ok && !known[step] {
			steps[step] = append(steps[step], p)
		}
	}
	s.Files = files // files gone are forgotten
	var out []training.Checkpoint
	for step, ps := range steps {
		settled := true
		for _, p := range ps {
			settled = settled && now.Sub(files[p].Since) >= settle
		}
		if r, ok := s.Refused[ps[0]]; ok && r.Size == files[ps[0]].Size && r.Mod.Equal(files[ps[0]].Mod) {
			settled = false // refused as it is: a file error is not tried again
		}
		if settled {
			out = append(out, training.Checkpoint{Step: step, Files: ps})
		}
	}
	slices.SortFunc(out, func(a, b training.Checkpoint) int { return a.Step - b.Step })
	return out, nil
}

// Refuse remembers that ck's files were refused as they are now: Scan
// offers the step again only once its first file changes.
func (s *State) Refuse(ck training.Checkpoint) {
	if s.Refused == nil {
		s.Refused = map[string]Seen{}
	}
	s.Refused[ck.Files[0]] = s.Files[ck.Files[0]]
}

// CheckpointName is the name of a followed model's checkpoint at step.
func CheckpointName(model string, step int) string {
	return fmt.Sprintf("%s step %d", model, step)
}
