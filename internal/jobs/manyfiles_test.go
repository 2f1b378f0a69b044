package jobs_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/store"
)

// One model's samples in several files (one per seed: verl's validation dump split in two, each
// problem's samples in both) import as `reach import --base base=DIR` does, pooled per problem,
// and give the tool-formats answer; the model's source names both files.
func TestLocalImportSeveralFilesPerModel(t *testing.T) {
	dir := toolFormats(t)
	base, rl := pairFiles(t, dir, "f_verl_*_validation_200.jsonl")
	seeds := t.TempDir()
	f, err := os.Open(base)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var parts [2]strings.Builder
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for i := 0; sc.Scan(); i++ { // 4 samples per problem: 2 in each file
		parts[(i%4)/2].WriteString(sc.Text() + "\n")
	}
	for i, p := range parts {
		if err := os.WriteFile(filepath.Join(seeds, "output-rs"+string(rune('0'+i))+".jsonl"), []byte(p.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, err := ingest.ModelFiles(seeds)
	if err != nil || len(files) != 2 {
		t.Fatalf("files %v: %v", files, err)
	}
	e, q := startLocal(t)
	c, err := e.importLocal(t, q, intake.Spec{Name: "seeds", Dataset: intake.LocalFile(filepath.Join(dir, "ds_math500_3.jsonl")),
		Models: []intake.Model{{Name: "base", File: intake.LocalFile(files[0]), More: []intake.File{intake.LocalFile(files[1])}},
			{Name: "rl", File: intake.LocalFile(rl)}}})
	if err != nil || c.Status != store.StatusReady {
		t.Fatalf("import: %v, status %s: %s", err, c.Status, c.Error)
	}
	rep, err := analysis.Build(context.Background(), e.st, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	checkToolAnswer(t, rep)
	if src := rep.Models[0].Source; src == nil || src.File != "2 files: output-rs0.jsonl, output-rs1.jsonl" {
		t.Errorf("source of the base model: %+v", src)
	}
}

// A sample index repeated within one of a model's files fails the import naming that file, its
// line and the layout it was read as; nothing is kept.
func TestLocalImportSeveralFilesDuplicateIndex(t *testing.T) {
	dir := toolFormats(t)
	_, rl := pairFiles(t, dir, "f_verl_*_validation_200.jsonl")
	seeds := t.TempDir()
	line := func(i int) string {
		return `{"problem_id": "test/algebra/2584.json", "sample_index": ` + string(rune('0'+i)) + `, "completion": "\\boxed{\\frac{14}{3}}", "correct": true}` + "\n"
	}
	_ = os.WriteFile(filepath.Join(seeds, "rs0.jsonl"), []byte(line(0)+line(1)), 0o644)
	_ = os.WriteFile(filepath.Join(seeds, "rs1.jsonl"), []byte(line(0)+line(0)), 0o644)
	files, err := ingest.ModelFiles(filepath.Join(seeds, "rs*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	e, q := startLocal(t)
	c, _ := e.importLocal(t, q, intake.Spec{Name: "dup", Dataset: intake.LocalFile(filepath.Join(dir, "ds_math500_3.jsonl")),
		Models: []intake.Model{{Name: "base", File: intake.LocalFile(files[0]), More: []intake.File{intake.LocalFile(files[1])}},
			{Name: "rl", File: intake.LocalFile(rl)}}})
	if c.Status != store.StatusFailed || !strings.Contains(c.Error, "rs1.jsonl:2: sample_index: duplicate sample index 0") ||
		!strings.Contains(c.Error, "(read as Reach JSONL, one line per sample)") {
		t.Fatalf("status %s, error %q", c.Status, c.Error)
	}
	for _, r := range c.Runs {
		if n, _, err := e.st.CountSamples(context.Background(), r.ID); err != nil || n != 0 {
			t.Errorf("run %s kept %d samples (%v)", r.ModelName, n, err)
		}
	}
}
