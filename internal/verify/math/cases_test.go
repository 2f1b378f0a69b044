package math

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/testfiles"
)

// equivalenceCase is one line of verifier-cases/math_equivalence.jsonl
// (carried in internal/testfiles).
type equivalenceCase struct {
	ID        string `json:"id"`
	Gold      string `json:"gold"`
	Pred      string `json:"pred"`
	Input     string `json:"input"`
	GoldInput string `json:"gold_input"`
	Equal     bool   `json:"equal"`
	Kind      string `json:"kind"`
	Policy    string `json:"policy"`
	Options   struct {
		FloatRounding int `json:"float_rounding"`
	} `json:"options"`
}

// readCasesQuiet reads a cases file, returning nothing on any error.
func readCasesQuiet(path string) []equivalenceCase {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []equivalenceCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var c equivalenceCase
		if json.Unmarshal(sc.Bytes(), &c) == nil {
			out = append(out, c)
		}
	}
	return out
}

func readCases(t testing.TB, path string) []equivalenceCase {
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	var out []equivalenceCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		var c equivalenceCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s:%d: %v", path, line, err)
		}
		out = append(out, c)
	}
	return out
}

func TestEquivalenceCases(t *testing.T) {
	path := os.Getenv("REACH_CASES")
	if path == "" {
		path = testfiles.Path(t, "verifier-cases/math_equivalence.jsonl")
	}
	cases := readCases(t, path)
	type tally struct{ n, agree int }
	kinds := map[string]*tally{}
	total := tally{}
	var misses []string
	for _, c := range cases {
		v := Check(c.Gold, c.Pred, Options{
			PredIsCompletion: c.Input == "completion",
			GoldIsCompletion: c.GoldInput == "completion",
			FloatRounding:    c.Options.FloatRounding,
		})
		got := v.IsCorrect()
		ok := got == c.Equal
		k := kinds[c.Kind]
		if k == nil {
			k = &tally{}
			kinds[c.Kind] = k
		}
		k.n++
		total.n++
		if ok {
			k.agree++
			total.agree++
		} else {
			misses = append(misses, fmt.Sprintf("%s (%s, policy %q): want %v got %s extracted=%q rule=%s reason=%s",
				c.ID, c.Kind, c.Policy, c.Equal, v.Status, trunc(v.Extracted, 80), v.Rule, v.Reason))
		}
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "%-24s %5s %5s %7s\n", "kind", "cases", "agree", "rate")
	for _, k := range names {
		x := kinds[k]
		fmt.Fprintf(&b, "%-24s %5d %5d %6.1f%%\n", k, x.n, x.agree, 100*float64(x.agree)/float64(x.n))
	}
	fmt.Fprintf(&b, "%-24s %5d %5d %6.1f%%\n", "TOTAL", total.n, total.agree, 100*float64(total.agree)/float64(total.n))
	t.Logf("agreement with %s\n%s", filepath.Base(path), b.String())
	for _, m := range misses {
		t.Logf("disagree: %s", m)
	}
	if rate := float64(total.agree) / float64(total.n); rate < 0.97 {
		t.Errorf("overall agreement %.1f%% < 97%%", 100*rate)
	}
	for _, k := range names {
		x := kinds[k]
		if x.n >= 10 && float64(x.agree)/float64(x.n) < 0.90 {
			t.Errorf("kind %s: agreement %.1f%% < 90%%", k, 100*float64(x.agree)/float64(x.n))
		}
	}
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
