package follow

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Only folders inside an allowed root are followed: a path outside them, a
// ".." part, a relative path and a symbolic link leading out are refused
// naming the allowed folders; a link that stays inside is followed where
// it leads.
func TestResolve(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "runs")
	secret := filepath.Join(base, "secret")
	for _, d := range []string{filepath.Join(root, "ppo", "val"), secret} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "ppo"), filepath.Join(root, "latest")); err != nil {
		t.Fatal(err)
	}
	roots, err := ParseRoots("# runs the trainers write\n" + root + "\n\n")
	if err != nil || len(roots) != 1 {
		t.Fatalf("roots %v, %v", roots, err)
	}
	realRoot := roots[0]
	for _, tc := range []struct {
		path, want string
	}{
		{filepath.Join(root, "ppo", "val"), filepath.Join(realRoot, "ppo", "val")},
		{root, realRoot},
		{filepath.Join(root, "latest", "val"), filepath.Join(realRoot, "ppo", "val")},
		{secret, "outside the folders that may be followed (" + realRoot + ")"},
		{filepath.Join(root, "escape"), "leads to"},
		{root + "/ppo/../../secret", `has a ".." part`},
		{"runs/ppo", "is not an absolute path"},
		{"/", "outside the folders"},
		{filepath.Join(root, "nothing"), "no such folder"},
		// Outside the roots, a missing folder gets an existing one's answer.
		{filepath.Join(secret, "nothing"), "outside the folders that may be followed"},
	} {
		got, err := Resolve(roots, tc.path)
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("Resolve(%q) = %q; want %q", tc.path, got, tc.want)
		}
	}
	if err := os.WriteFile(filepath.Join(secret, "100.jsonl"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(secret, "100.jsonl"), filepath.Join(root, "ppo", "val", "100.jsonl")); err != nil {
		t.Fatal(err)
	}
	if err := Within(roots, filepath.Join(root, "ppo", "val", "100.jsonl")); err == nil || !strings.Contains(err.Error(), "outside the folders") {
		t.Errorf("a step file linked from outside: %v", err)
	}
	if _, err := Resolve(nil, root); err == nil || !strings.Contains(err.Error(), "is off") {
		t.Errorf("no roots: %v", err)
	}
	for _, bad := range []string{"runs", filepath.Join(base, "none"), filepath.Join(base, "file")} {
		_ = os.WriteFile(filepath.Join(base, "file"), nil, 0o644)
		if _, err := ParseRoots(bad); err == nil || !strings.HasPrefix(err.Error(), "line 1:") {
			t.Errorf("ParseRoots(%q): %v", bad, err)
		}
	}
}

// A step file is offered once it has not changed for the settling time; a
// refused one only once it changes.
func TestScanSettles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("100.jsonl", "{}\n")
	var s State
	t0 := time.Now()
	if cks, err := s.Scan(dir, dir, nil, t0, time.Second); err != nil || len(cks) != 0 {
		t.Fatalf("first look: %v %v; want nothing yet", cks, err)
	}
	cks, err := s.Scan(dir, dir, nil, t0.Add(time.Second), time.Second)
	if err != nil || len(cks) != 1 || cks[0].Step != 100 {
		t.Fatalf("settled: %v %v", cks, err)
	}
	s.Refuse(cks[0])
	if cks, _ := s.Scan(dir, dir, nil, t0.Add(3*time.Second), time.Second); len(cks) != 0 {
		t.Errorf("refused as it is, offered again: %v", cks)
	}
	write("100.jsonl", "{}\n{}\n")
	_ = os.Chtimes(filepath.Join(dir, "100.jsonl"), t0.Add(4*time.Second), t0.Add(4*time.Second))
	if cks, _ := s.Scan(dir, dir, nil, t0.Add(4*time.Second), time.Second); len(cks) != 0 {
		t.Errorf("changed just now, offered: %v", cks)
	}
	if cks, _ := s.Scan(dir, dir, nil, t0.Add(6*time.Second), time.Second); len(cks) != 1 {
		t.Errorf("changed and settled, not offered: %v", cks)
	}
	if cks, _ := s.Scan(dir, dir, map[int]bool{100: true}, t0.Add(7*time.Second), time.Second); len(cks) != 0 {
		t.Errorf("a known step offered: %v", cks)
	}
}
