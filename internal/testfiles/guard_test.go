package testfiles

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Only this package may reach outside the repository for data, and only
// through Unlicensed: any other Go file naming the team's shared folder
// (a string like "../shared/data", "shared" as a path element, or
// /work/...) would make a clone's tests depend on what it lacks.
func TestNoPathLeavesTheRepository(t *testing.T) {
	root := filepath.Join(Dir(), "..", "..")
	// testfiles.go holds Unlicensed; this file holds the patterns.
	allowed := map[string]bool{filepath.Join(Dir(), "testfiles.go"): true, filepath.Join(Dir(), "guard_test.go"): true}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || allowed[path] || strings.HasSuffix(path, "_templ.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, lit := range stringLiterals(src) {
			if leaves(lit.value) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s:%d: %q reaches outside the repository: carry the data in internal/testfiles, or read it with testfiles.Unlicensed", rel, lit.line, lit.value)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// leaves reports whether a string literal names the shared folder.
func leaves(s string) bool {
	s = filepath.ToSlash(s)
	if s == "shared" || strings.HasPrefix(s, "/work/") {
		return true
	}
	for _, el := range strings.Split(s, "/") {
		if el == "shared" && strings.Contains(s, "/") {
			return true
		}
	}
	return false
}

type literal struct {
	value string
	line  int
}

// stringLiterals are a Go file's string literals, unquoted.
func stringLiterals(src []byte) []literal {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, 0)
	var out []literal
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			return out
		}
		if tok == token.STRING {
			if v, err := strconv.Unquote(lit); err == nil {
				out = append(out, literal{v, fset.Position(pos).Line})
			}
		}
	}
}

func TestLeaves(t *testing.T) {
	for s, want := range map[string]bool{
		"../shared/data": true, "../../../shared/data/generations/x": true, "shared": true, "/work/shared": true,
		"shared between requests": false, "data/math500/test.jsonl": false, "#shared-stats": false,
	} {
		if got := leaves(s); got != want {
			t.Errorf("leaves(%q) = %v, want %v", s, got, want)
		}
	}
}

// The stand-in is what its doc and Facts say: 30 problems, 8 rollouts each,
// the same bytes on every write.
func TestStandIn(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if err := WriteStandIn(a); err != nil {
		t.Fatal(err)
	}
	if err := WriteStandIn(b); err != nil {
		t.Fatal(err)
	}
	for name, want := range Facts(t).Correct {
		x, err := os.ReadFile(filepath.Join(a, name))
		if err != nil {
			t.Fatal(err)
		}
		y, _ := os.ReadFile(filepath.Join(b, name))
		if string(x) != string(y) {
			t.Errorf("%s differs between two writes", name)
		}
		rows := strings.Split(strings.TrimSpace(string(x)), "\n")
		got := strings.Count(string(x), `"correct":true`)
		if len(rows) != 30 || got != want || strings.Count(string(x), `"rollout":`) != 240 {
			t.Errorf("%s: %d rows, %d right rollouts; want 30 rows of 8, %d right", name, len(rows), got, want)
		}
	}
}
