package analysis

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// examplePair builds a comparison of the shipped example files: counts per
// problem key from each model's file, problems in the base file's order.
func examplePair(t *testing.T, read func(path string) (map[string]store.Count, []string), baseFile, otherFile, otherRole string) (store.Comparison, []store.Problem, map[int64][]store.Count) {
	t.Helper()
	dir := filepath.Join("..", "examples", "data")
	b, keys := read(filepath.Join(dir, baseFile))
	o, _ := read(filepath.Join(dir, otherFile))
	c := store.Comparison{ID: 1, Name: "example", Status: store.StatusReady, Runs: []store.Run{
		{ID: 1, ModelName: "base", Role: "base"}, {ID: 2, ModelName: "other", Role: otherRole}}}
	counts := map[int64][]store.Count{}
	var ps []store.Problem
	for i, k := range keys {
		pid := int64(100 + i)
		ps = append(ps, store.Problem{ID: pid, Key: k, Idx: i, Reference: "x^2+" + k})
		for run, m := range map[int64]map[string]store.Count{1: b, 2: o} {
			x, ok := m[k]
			if !ok {
				t.Fatalf("problem %s missing from run %d", k, run)
			}
			x.RunID, x.ProblemID = run, pid
			counts[run] = append(counts[run], x)
		}
	}
	return c, ps, counts
}

func readPassedJSONL(t *testing.T) func(string) (map[string]store.Count, []string) {
	return func(path string) (map[string]store.Count, []string) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out, keys := map[string]store.Count{}, []string{}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var rec struct {
				TaskID string `json:"task_id"`
				Passed bool   `json:"passed"`
			}
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatal(err)
			}
			x, seen := out[rec.TaskID]
			if !seen {
				keys = append(keys, rec.TaskID)
			}
			x.N++
			if rec.Passed {
				x.C++
			}
			out[rec.TaskID] = x
		}
		return out, keys
	}
}

func readCountsCSV(t *testing.T) func(string) (map[string]store.Count, []string) {
	return func(path string) (map[string]store.Count, []string) {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		out, keys := map[string]store.Count{}, []string{}
		for _, r := range rows[1:] {
			n, _ := strconv.Atoi(r[1])
			c, _ := strconv.Atoi(r[2])
			out[r[0]] = store.Count{N: n, C: c}
			keys = append(keys, r[0])
		}
		return out, keys
	}
}

// The shipped HumanEval example: base ahead only at k = 1 (32.50% vs
// 32.38%), behind at every k >= 2. Issue 9 case 9's right label.
func TestHumanEvalExampleCrossoverLabel(t *testing.T) {
	c, ps, counts := examplePair(t, readPassedJSONL(t), "mistral-7b-instruct.jsonl", "zephyr-7b-alpha.jsonl", "rl")
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	x := rep.Pairs[0].Crossover
	if want := "RL model ahead from k = 2; base model ahead only at k = 1"; x.Label != want {
		t.Errorf("label %q, want %q", x.Label, want)
	}
	if x.Found || x.AheadAtKMax != "other" || x.AheadSince != 2 || len(x.Crossings) != 1 || x.Crossings[0].Ahead != "other" {
		t.Errorf("crossover %+v", x)
	}
}

// The shipped MATH500 counts (Yue et al.'s reproduction): README says k* ≈ 14.
func TestMATH500ExampleCrossoverLabel(t *testing.T) {
	c, ps, counts := examplePair(t, readCountsCSV(t), "qwen2.5-7b-base.csv", "qwen2.5-7b-simplerl-zoo.csv", "rl")
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	x := rep.Pairs[0].Crossover
	if x.Label != "k* ≈ 14.4" || !x.Found || math.Round(x.K) != 14 || x.AheadAtKMax != "base" || x.AheadSince != 15 {
		t.Errorf("crossover %+v, want k* ≈ 14.4 with the base model ahead from k = 15 through 128", x)
	}
}

func TestCrossoverLabels(t *testing.T) {
	for _, tc := range []struct {
		name        string
		ks          []int
		base, other []float64
		want        string
	}{
		{"crossing", []int{1, 2, 4, 8}, []float64{.2, .5, .8, .9}, []float64{.4, .6, .7, .8}, "k* ≈ 2.8"},
		{"base ahead everywhere", []int{1, 2}, []float64{.6, .9}, []float64{.5, .8}, "base model ahead from k = 1"},
		{"never", []int{1, 2, 4}, []float64{.1, .2, .3}, []float64{.5, .6, .7}, "no crossover up to k = 4"},
		{"touch at the top", []int{1, 2, 4, 8}, []float64{.3, .6, .9, 1}, []float64{.5, .8, .95, 1},
			"no crossover up to k = 8: the curves meet at k = 8 without crossing"},
		{"identical", []int{1, 2}, []float64{.3, .5}, []float64{.3, .5}, "no crossover: the curves are equal at every k up to k = 2"},
		{"base ahead until 4", []int{1, 2, 4, 8, 16}, []float64{.6, .7, .8, .8, .8}, []float64{.5, .6, .7, .9, .95},
			"RL model ahead from k = 8; base model ahead only at k ≤ 4"},
		{"three crossings", []int{1, 2, 4, 8, 16}, []float64{.4, .6, .7, .9, .95}, []float64{.5, .5, .8, .6, .75},
			"k* ≈ 4.8; the curves cross 3 times (k ≈ 1.4, 2.8, 4.8)"},
		{"ahead then both 100%", []int{1, 2, 4, 8}, []float64{.3, .8, 1, 1}, []float64{.5, .7, .9, 1},
			"k* ≈ 1.6; equal from k = 8"},
	} {
		x, err := crossoverOf(tc.ks, tc.base, tc.other, tc.ks[len(tc.ks)-1], "RL model")
		if err != nil {
			t.Fatal(err)
		}
		if x.Label != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, x.Label, tc.want)
		}
	}
}

func TestSignificanceText(t *testing.T) {
	p := PairReport{Significant: []SignificantRange{{Ahead: "other", FromK: 1, ToK: 12}, {Ahead: "base", FromK: 3 * 16, ToK: 128, ThroughKMax: true}}}
	want := "RL model clearly ahead only at k = 1–12; base model clearly ahead from k = 48 through k max = 128"
	if got := p.SignificanceText("RL model", 128); got != want {
		t.Errorf("%q\nwant %q", got, want)
	}
	if got := (PairReport{}).SignificanceText("RL model", 8); got != "" {
		t.Errorf("nothing significant: %q", got)
	}
}
