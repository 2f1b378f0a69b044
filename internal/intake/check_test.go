package intake

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/ingest"
)

// A spec no comparison can be made of is refused before anything is stored,
// in words (the CLI showed Postgres's unique-constraint error for two
// models with one name).
func TestSpecCheck(t *testing.T) {
	two := []Model{{Name: "base"}, {Name: "rl"}}
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Name: "ok", Models: two}, ""},
		{Spec{Models: two}, "needs a name"},
		{Spec{Name: "one", Models: two[:1]}, "at least one other model (got 1)"},
		{Spec{Name: "same", Models: []Model{{Name: "a"}, {Name: "a"}}}, `two models are named "a"`},
		{Spec{Name: "blank", Models: []Model{{Name: "a"}, {Name: ""}}}, "model 2 has no name"},
		{Spec{Name: "limit", Models: named(MaxModels)}, ""},
		{Spec{Name: "too many", Models: named(MaxModels + 1)}, "at most 64 models (the base model included); got 65"},
		{Spec{Name: "ten thousand", Models: named(10000)}, "got 10000"},
	} {
		err := tc.spec.check()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v; want %q", tc.spec.Name, err, tc.want)
		}
	}
}

func named(n int) []Model {
	ms := make([]Model, n)
	for i := range ms {
		ms[i].Name = fmt.Sprintf("m%d", i)
	}
	return ms
}

// A model's further files must be in its first file's layout: they are all read as that one.
func TestSameLayoutRefusesAnother(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	_ = os.WriteFile(a, []byte(`{"problem_id": "p", "completion": "x"}`+"\n"), 0o644)
	_ = os.WriteFile(b, []byte(`{"task_id": "p", "completion": "x", "passed": true}`+"\n"), 0o644)
	m := Model{Name: "rl", File: LocalFile(a), More: []File{LocalFile(b)}}
	err := sameLayout(m, string(ingest.FormatReachSample))
	if err == nil || !strings.Contains(err.Error(), "b.jsonl is human-eval") || !strings.Contains(err.Error(), "one model's files must share one layout") {
		t.Fatalf("err = %v", err)
	}
	m.More = []File{LocalFile(a)}
	if err := sameLayout(m, string(ingest.FormatReachSample)); err != nil {
		t.Fatal(err)
	}
}
