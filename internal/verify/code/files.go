package code

import (
	"crypto/sha256"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// fileSet is what the sandbox's read-only root holds: host files and
// directories bound at the same path, and the symlinks on the way to them
// (Debian's /lib -> usr/lib, a library's soname -> its versioned file), so
// that every path the interpreter and the dynamic loader use resolves inside
// the sandbox as it does on the host, and nothing else exists.
type fileSet struct {
	binds    map[string]string // path inside -> host path (the same, or a packed directory)
	symlinks map[string]string // link path -> target as written
	libDirs  []string          // where shared libraries were found (LD_LIBRARY_PATH)
}

func newFileSet() *fileSet {
	return &fileSet{binds: map[string]string{}, symlinks: map[string]string{}}
}

// add makes path resolve inside the sandbox: each symlink met while
// resolving it is recreated, and the final file or directory is bound.
func (fs *fileSet) add(path string) error {
	real, err := fs.walk(path, 0)
	if err != nil {
		return err
	}
	fs.binds[real] = real
	return nil
}

// walk resolves path component by component, recording symlinks.
func (fs *fileSet) walk(path string, depth int) (string, error) {
	if depth > 40 {
		return "", fmt.Errorf("%s: too many levels of symbolic links", path)
	}
	path = filepath.Clean(path)
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%s: not an absolute path", path)
	}
	parts := strings.Split(path, "/")[1:]
	cur := "/"
	for i, p := range parts {
		next := filepath.Join(cur, p)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(next)
			if err != nil {
				return "", err
			}
			fs.symlinks[next] = target
			abs := target
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(cur, target)
			}
			rest := filepath.Join(append([]string{abs}, parts[i+1:]...)...)
			return fs.walk(rest, depth+1)
		}
		cur = next
	}
	return cur, nil
}

// bwrapArgs returns the bubblewrap arguments that build the root: symlinks
// first (bwrap creates parent directories as needed), then read-only binds,
// shortest paths first so that a directory never hides a file bound inside.
func (fs *fileSet) bwrapArgs() []string {
	var args []string
	links := make([]string, 0, len(fs.symlinks))
	for l := range fs.symlinks {
		links = append(links, l)
	}
	sort.Slice(links, func(i, j int) bool {
		return len(links[i]) < len(links[j]) || len(links[i]) == len(links[j]) && links[i] < links[j]
	})
	binds := make([]string, 0, len(fs.binds))
	for b := range fs.binds {
		if !fs.covered(b) {
			binds = append(binds, b)
		}
	}
	sort.Strings(binds)
	for _, b := range binds {
		args = append(args, "--ro-bind", fs.binds[b], b)
	}
	for _, l := range links {
		if fs.insideBind(l) {
			continue // the bound directory already holds it
		}
		args = append(args, "--symlink", fs.symlinks[l], l)
	}
	return args
}

// covered reports whether a bound directory already contains path.
func (fs *fileSet) covered(path string) bool {
	for d := filepath.Dir(path); d != "/" && d != "."; d = filepath.Dir(d) {
		if _, ok := fs.binds[d]; ok {
			return true
		}
	}
	return false
}

func (fs *fileSet) insideBind(path string) bool { return fs.covered(path) }

// libSearchDirs returns the directories the dynamic loader searches: those
// of /etc/ld.so.conf (and its includes) and the usual defaults.
func libSearchDirs() []string {
	var dirs []string
	seen := map[string]bool{}
	addDir := func(d string) {
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	var readConf func(path string, depth int)
	readConf = func(path string, depth int) {
		if depth > 4 {
			return
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if i := strings.IndexByte(line, '#'); i >= 0 {
				line = strings.TrimSpace(line[:i])
			}
			if line == "" {
				continue
			}
			if rest, ok := strings.CutPrefix(line, "include "); ok {
				matches, _ := filepath.Glob(strings.TrimSpace(rest))
				sort.Strings(matches)
				for _, m := range matches {
					readConf(m, depth+1)
				}
				continue
			}
			if filepath.IsAbs(line) {
				addDir(line)
			}
		}
	}
	readConf("/etc/ld.so.conf", 0)
	for _, d := range []string{"/lib64", "/usr/lib64", "/lib", "/usr/lib"} {
		addDir(d)
	}
	return dirs
}

// addELF adds an ELF executable or shared object, its program interpreter
// and, recursively, every shared library it needs (DT_NEEDED, looked up in
// RUNPATH/RPATH and then dirs). A library that cannot be found is skipped:
// the start-up probe tells whether the interpreter itself runs.
func (fs *fileSet) addELF(path string, dirs []string, done map[string]bool) error {
	real, err := fs.walk(path, 0)
	if err != nil {
		return err
	}
	if done[real] {
		return nil
	}
	done[real] = true
	fs.binds[real] = real
	f, err := elf.Open(real)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err != nil {
				return fmt.Errorf("%s: program interpreter: %w", path, err)
			}
			interp := strings.TrimRight(string(b), "\x00")
			if err := fs.addELF(interp, dirs, done); err != nil {
				return err
			}
		}
	}
	needed, err := f.ImportedLibraries()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var search []string
	for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
		vals, _ := f.DynString(tag)
		for _, v := range vals {
			for _, d := range strings.Split(v, ":") {
				d = strings.ReplaceAll(d, "$ORIGIN", filepath.Dir(real))
				if filepath.IsAbs(d) {
					search = append(search, d)
				}
			}
		}
	}
	search = append(search, dirs...)
	for _, lib := range needed {
		found := ""
		for _, d := range search {
			cand := filepath.Join(d, lib)
			if _, err := os.Stat(cand); err == nil {
				found = cand
				fs.noteLibDir(d)
				break
			}
		}
		if found == "" {
			continue
		}
		if err := fs.addELF(found, dirs, done); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

func (fs *fileSet) noteLibDir(d string) {
	for _, x := range fs.libDirs {
		if x == d {
			return
		}
	}
	fs.libDirs = append(fs.libDirs, d)
}

// pack replaces the binds of many files in one directory (the shared
// libraries) by one bind of a private directory holding just those files
// and their symlinks: each bind is a mount that every run pays for. The
// directory is built once under cache, named by a hash of what it holds
// (hard links where possible, else copies; read-only to everyone else),
// and reused by later processes.
func (fs *fileSet) pack(cache string) error {
	byDir := map[string][]string{}
	for dest, src := range fs.binds {
		if dest != src {
			continue
		}
		if fi, err := os.Stat(src); err == nil && fi.Mode().IsRegular() {
			byDir[filepath.Dir(dest)] = append(byDir[filepath.Dir(dest)], dest)
		}
	}
	for dir, files := range byDir {
		if len(files) < 3 {
			continue
		}
		sort.Strings(files)
		links := map[string]string{}
		for l, target := range fs.symlinks {
			if filepath.Dir(l) == dir {
				links[filepath.Base(l)] = target
			}
		}
		h := sha256.New()
		for _, f := range files {
			fi, err := os.Stat(f)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%s %d %d\n", f, fi.Size(), fi.ModTime().UnixNano())
		}
		names := make([]string, 0, len(links))
		for n := range links {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(h, "%s -> %s\n", n, links[n])
		}
		packed := filepath.Join(cache, fmt.Sprintf("%x", h.Sum(nil))[:24])
		if _, err := os.Stat(packed); err != nil {
			if err := buildPacked(cache, packed, files, links); err != nil {
				return err
			}
		}
		for _, f := range files {
			delete(fs.binds, f)
		}
		fs.binds[dir] = packed
	}
	return nil
}

func buildPacked(cache, packed string, files []string, links map[string]string) error {
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(cache, "build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		dst := filepath.Join(tmp, filepath.Base(f))
		if os.Link(f, dst) == nil {
			continue
		}
		if err := copyFile(f, dst); err != nil {
			return err
		}
	}
	for n, target := range links {
		if err := os.Symlink(target, filepath.Join(tmp, n)); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, packed); err != nil {
		if _, serr := os.Stat(packed); serr == nil {
			return nil // another process built it first
		}
		return err
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
