package passk

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/reach-lab/reach/internal/testfiles"
)

// math500Counts is the real Qwen2.5-7B base vs SimpleRL-Zoo counts (n = 128), carried in the
// repository (see testfiles; the folder's SOURCE.md).
const math500Counts = "generations/math500-qwen25-7b-base-vs-simplerl-counts"

// readCountsCSV reads problem_id,n,correct into a map and the id order.
func readCountsCSV(t *testing.T, path string) (map[string]Count, []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(rows) == 0 || rows[0][0] != "problem_id" || rows[0][1] != "n" || rows[0][2] != "correct" {
		t.Fatalf("%s: unexpected header %v", path, rows[:1])
	}
	out := map[string]Count{}
	var ids []string
	for i, row := range rows[1:] {
		n, err1 := strconv.Atoi(row[1])
		c, err2 := strconv.Atoi(row[2])
		if err1 != nil || err2 != nil {
			t.Fatalf("%s line %d: %v %v", path, i+2, err1, err2)
		}
		out[row[0]] = Count{n, c}
		ids = append(ids, row[0])
	}
	return out, ids
}

// loadMATH500Pair returns base and RL counts aligned by problem_id (base file order).
func loadMATH500Pair(t *testing.T) (base, rl []Count) {
	t.Helper()
	b, ids := readCountsCSV(t, testfiles.Data(t, math500Counts+"/qwen2.5-7b-base.csv"))
	r, _ := readCountsCSV(t, testfiles.Data(t, math500Counts+"/qwen2.5-7b-simplerl-zoo.csv"))
	if len(ids) != 500 || len(r) != 500 {
		t.Fatalf("got %d base and %d RL problems, want 500 each", len(ids), len(r))
	}
	for _, id := range ids {
		rc, ok := r[id]
		if !ok {
			t.Fatalf("problem %s missing from RL file", id)
		}
		base, rl = append(base, b[id]), append(rl, rc)
	}
	return base, rl
}

func pct2(v float64) float64 { return math.Round(v*10000) / 100 }

func TestMATH500RealPairHeadline(t *testing.T) {
	base, rl := loadMATH500Pair(t)
	cb, err := CurveAll(base)
	if err != nil {
		t.Fatal(err)
	}
	cr, err := CurveAll(rl)
	if err != nil {
		t.Fatal(err)
	}
	if len(cb) != 128 || len(cr) != 128 {
		t.Fatalf("curve lengths %d, %d; want 128", len(cb), len(cr))
	}
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"base pass@1", cb[0], 61.39}, {"RL pass@1", cr[0], 77.93},
		{"base pass@128", cb[127], 96.20}, {"RL pass@128", cr[127], 93.00},
	} {
		if pct2(c.got) != c.want {
			t.Errorf("%s = %.4f%%, want %.2f%%", c.what, 100*c.got, c.want)
		}
	}
	s, err := Solved(base, rl)
	if err != nil {
		t.Fatal(err)
	}
	if s.Both != 462 || s.BaseOnly != 19 || s.OtherOnly != 3 || s.Neither != 16 {
		t.Errorf("solved sets both %d / base-only %d / RL-only %d / neither %d, want 462/19/3/16",
			s.Both, s.BaseOnly, s.OtherOnly, s.Neither)
	}
	x, err := Crossover(AllKs(128), cb, cr)
	if err != nil {
		t.Fatal(err)
	}
	gap, err := SamplingEfficiencyGap(cb, cr, 128)
	if err != nil {
		t.Fatal(err)
	}
	// ΔSE = 96.20 - 77.93.
	if pct2(gap) != 18.27 {
		t.Errorf("ΔSE = %.4f points, want 18.27", 100*gap)
	}
	// README: k* ≈ 14; one change of lead, the base model ahead from k = 15 through 128.
	if !x.Found || math.Round(x.K) != 14 || x.AtSampledK != 15 || x.End != BaseAhead || x.Since != 15 || len(x.Crossings) != 1 {
		t.Errorf("crossover %+v, want k* ≈ 14 (base ahead from k = 15 on, one crossing)", x)
	}
	t.Logf("crossover k* = %.2f (first sampled k %d)", x.K, x.AtSampledK)
}

// TestMATH500PairedDifferenceInterval is issue 6's check: the paired 95% interval of
// pass@128(RL) − pass@128(base) from 20,000 draws is within 0.3 points of the public
// reproduction's [−5.00, −1.40].
func TestMATH500PairedDifferenceInterval(t *testing.T) {
	base, rl := loadMATH500Pair(t)
	res, err := Bootstrap([][]Count{base, rl}, BootstrapOptions{Draws: 20000, Seed: 2025})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Pairs[0].Diff[127]
	if res.Ks[127] != 128 {
		t.Fatalf("ks[127] = %d", res.Ks[127])
	}
	if math.Abs(100*d.Point+3.2) > 1e-9 { // (3 - 19)/500
		t.Errorf("difference point %.4f points, want -3.20", 100*d.Point)
	}
	if math.Abs(100*d.Lo+5.00) > 0.3 || math.Abs(100*d.Hi+1.40) > 0.3 {
		t.Errorf("paired 95%% interval [%.2f, %.2f] points, want within 0.3 of [-5.00, -1.40]", 100*d.Lo, 100*d.Hi)
	}
	t.Logf("pass@128(RL) - pass@128(base): %.2f [%.2f, %.2f] points", 100*d.Point, 100*d.Lo, 100*d.Hi)
	m0, m1, p := res.Models[0], res.Models[1], res.Pairs[0]
	t.Logf("pass@1 base %.2f [%.2f, %.2f], RL %.2f [%.2f, %.2f]", 100*m0.Pass1.Point, 100*m0.Pass1.Lo, 100*m0.Pass1.Hi,
		100*m1.Pass1.Point, 100*m1.Pass1.Lo, 100*m1.Pass1.Hi)
	t.Logf("pass@128 base %.2f [%.2f, %.2f], RL %.2f [%.2f, %.2f]", 100*m0.PassN.Point, 100*m0.PassN.Lo, 100*m0.PassN.Hi,
		100*m1.PassN.Point, 100*m1.PassN.Lo, 100*m1.PassN.Hi)
	t.Logf("ΔSE %.2f [%.2f, %.2f]; k* %.2f [%v %.2f, %v %.2f], found in %.1f%% of draws; diff band below zero from k = %d",
		100*p.Gap.Point, 100*p.Gap.Lo, 100*p.Gap.Hi, p.Crossover.Point.K, p.Crossover.Lo.Found, p.Crossover.Lo.K,
		p.Crossover.Hi.Found, p.Crossover.Hi.K, 100*p.Crossover.FoundShare, p.BelowZeroFrom)
	// The band must contain the point estimate and the crossover band must bracket the point.
	if !(p.Crossover.Lo.Found && p.Crossover.Lo.K <= p.Crossover.Point.K) ||
		(p.Crossover.Hi.Found && p.Crossover.Hi.K < p.Crossover.Point.K) {
		t.Errorf("crossover band %+v does not bracket k* = %v", p.Crossover, p.Crossover.Point.K)
	}
}

func TestMATH500FisherBaseOnly(t *testing.T) {
	base, rl := loadMATH500Pair(t)
	s, err := Solved(base, rl)
	if err != nil {
		t.Fatal(err)
	}
	var ps []float64
	sig := 0
	for _, i := range s.BaseOnlyProblems {
		p, err := FisherExact(base[i].C, base[i].N, rl[i].C, rl[i].N)
		if err != nil {
			t.Fatal(err)
		}
		if base[i].C == 1 && p != 1 {
			t.Errorf("problem %d: 1/128 vs 0/128 gave p = %v, want 1", i, p)
		}
		if p < 0.05 {
			sig++
		}
		ps = append(ps, p)
	}
	adj, err := Holm(ps)
	if err != nil {
		t.Fatal(err)
	}
	holmSig := 0
	for _, p := range adj {
		if p < 0.05 {
			holmSig++
		}
	}
	// Issue 6's headline example reads "base-only 19 (4 significant at 5%)".
	if sig != 4 || holmSig > sig {
		t.Errorf("%d base-only solves significant at 5%% (%d after Holm), want 4 (and no more after Holm)", sig, holmSig)
	}
	t.Logf("base-only %d: %d significant at 5%% (%d after Holm)", len(ps), sig, holmSig)
}

// loadHumanEvalPair reads the shipped HumanEval example (Mistral-7B-Instruct vs Zephyr-7B-alpha,
// 10 samples per task with pass/fail) into counts aligned by task id.
func loadHumanEvalPair(t *testing.T) (base, other []Count) {
	t.Helper()
	read := func(name string) (map[string]Count, []string) {
		f, err := os.Open(filepath.Join("..", "examples", "data", name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		out := map[string]Count{}
		var ids []string
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var rec struct {
				TaskID string `json:"task_id"`
				Passed bool   `json:"passed"`
			}
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			x, seen := out[rec.TaskID]
			if !seen {
				ids = append(ids, rec.TaskID)
			}
			x.N++
			if rec.Passed {
				x.C++
			}
			out[rec.TaskID] = x
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		return out, ids
	}
	b, ids := read("mistral-7b-instruct.jsonl")
	o, _ := read("zephyr-7b-alpha.jsonl")
	for _, id := range ids {
		base, other = append(base, b[id]), append(other, o[id])
	}
	return base, other
}

// TestHumanEvalCrossoverLabelShape is issue 9 case 9: the base model is ahead only at k = 1
// (32.50% vs 32.38%) and behind at every k >= 2, so there is no crossover and the other model
// leads from k = 2.
func TestHumanEvalCrossoverLabelShape(t *testing.T) {
	base, other := loadHumanEvalPair(t)
	if len(base) != 164 {
		t.Fatalf("%d tasks, want 164", len(base))
	}
	cb, _ := CurveAll(base)
	co, _ := CurveAll(other)
	if pct2(cb[0]) != 32.50 || pct2(co[0]) != 32.38 || len(cb) != 10 {
		t.Fatalf("pass@1 %.4f%% vs %.4f%% (%d ks), want 32.50 vs 32.38 up to k = 10", 100*cb[0], 100*co[0], len(cb))
	}
	x, err := Crossover(AllKs(10), cb, co)
	if err != nil {
		t.Fatal(err)
	}
	if x.Found || x.End != OtherAhead || x.Since != 2 || len(x.Crossings) != 1 || x.Crossings[0].Lead != OtherAhead ||
		x.Crossings[0].From != 1 || x.Crossings[0].To != 2 {
		t.Errorf("crossover %+v, want none: other model ahead from k = 2 after one crossing in (1, 2)", x)
	}
	res, err := Bootstrap([][]Count{base, other}, BootstrapOptions{Draws: 500, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	// The point estimate of the bootstrap follows the same definition.
	if p := res.Pairs[0]; p.Crossover.Point.Found || p.BelowZeroFrom != 0 {
		t.Errorf("bootstrap point %+v, base ahead from %d; want no crossover", p.Crossover.Point, p.BelowZeroFrom)
	}
}
