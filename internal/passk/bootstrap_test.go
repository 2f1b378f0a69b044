package passk

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"testing"
)

func randomCounts(r *rand.Rand, nprob, n int) []Count {
	out := make([]Count, nprob)
	for i := range out {
		switch r.IntN(4) {
		case 0:
			out[i] = Count{n, 0}
		case 1:
			out[i] = Count{n, n}
		default:
			out[i] = Count{n, r.IntN(n + 1)}
		}
	}
	return out
}

// TestBootstrapMatchesNaiveResampling recomputes every draw the slow way (materialise the
// resampled problem list, call CurveAll and Crossover) from the same PCG stream and checks the
// intervals and point estimates agree.
func TestBootstrapMatchesNaiveResampling(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const nprob, n, draws, seed = 40, 16, 300, 99
	base, rl := randomCounts(r, nprob, n), randomCounts(r, nprob, n)
	ks := []int{1, 2, 4, 8, 16}
	res, err := Bootstrap([][]Count{base, rl}, BootstrapOptions{Draws: draws, Seed: seed, Ks: ks, GapK: 8})
	if err != nil {
		t.Fatal(err)
	}

	var rr *rand.Rand
	curveDraws := make([][][]float64, 2) // [model][ksIdx][draw]
	for m := range curveDraws {
		curveDraws[m] = make([][]float64, len(ks))
	}
	diffDraws := make([][]float64, len(ks))
	var gapDraws, crossDraws []float64
	for d := range draws {
		if d%drawChunk == 0 { // each chunk of draws has its own stream
			rr = rand.New(rand.NewPCG(seed, pcgStream+uint64(d/drawChunk)))
		}
		var rb, ro []Count
		for range nprob {
			i := rr.IntN(nprob)
			rb, ro = append(rb, base[i]), append(ro, rl[i])
		}
		cb, _ := CurveAll(rb)
		co, _ := CurveAll(ro)
		var sb, so []float64
		for j, k := range ks {
			curveDraws[0][j] = append(curveDraws[0][j], cb[k-1])
			curveDraws[1][j] = append(curveDraws[1][j], co[k-1])
			diffDraws[j] = append(diffDraws[j], co[k-1]-cb[k-1])
			sb, so = append(sb, cb[k-1]), append(so, co[k-1])
		}
		gapDraws = append(gapDraws, cb[7]-co[0])
		x, _ := Crossover(ks, sb, so)
		crossDraws = append(crossDraws, math.Inf(1))
		if x.Found {
			crossDraws[len(crossDraws)-1] = x.K
		}
	}
	q := func(v []float64, p float64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		return quantile(s, p)
	}
	check := func(what string, got Estimate, pt float64, draws []float64) {
		t.Helper()
		want := Estimate{pt, q(draws, 0.025), q(draws, 0.975)}
		if !near(got.Point, want.Point, 1e-12) || !near(got.Lo, want.Lo, 1e-12) || !near(got.Hi, want.Hi, 1e-12) {
			t.Errorf("%s: got %+v, naive %+v", what, got, want)
		}
	}
	cb, _ := CurveAll(base)
	co, _ := CurveAll(rl)
	for j, k := range ks {
		check("base curve", res.Models[0].Curve[j], cb[k-1], curveDraws[0][j])
		check("rl curve", res.Models[1].Curve[j], co[k-1], curveDraws[1][j])
		check("diff", res.Pairs[0].Diff[j], co[k-1]-cb[k-1], diffDraws[j])
	}
	check("base pass@1", res.Models[0].Pass1, cb[0], curveDraws[0][0])
	check("rl pass@n", res.Models[1].PassN, co[n-1], curveDraws[1][len(ks)-1])
	check("gap", res.Pairs[0].Gap, cb[7]-co[0], gapDraws)

	lo, hi := q(crossDraws, 0.025), q(crossDraws, 0.975)
	cr := res.Pairs[0].Crossover
	if cr.Lo != bound(lo) || cr.Hi != bound(hi) {
		t.Errorf("crossover band %+v / %+v, naive %v / %v", cr.Lo, cr.Hi, lo, hi)
	}
	found := 0
	for _, k := range crossDraws {
		if !math.IsInf(k, 1) {
			found++
		}
	}
	if cr.FoundShare != float64(found)/draws {
		t.Errorf("found share %v, naive %v", cr.FoundShare, float64(found)/draws)
	}
	if res.NMin != n || res.GapK != 8 || res.Draws != draws || res.Level != 0.95 {
		t.Errorf("result header %+v", res)
	}
}

func TestBootstrapDeterministicAndDegenerate(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	base, rl := randomCounts(r, 60, 8), randomCounts(r, 60, 8)
	opt := BootstrapOptions{Draws: 200, Seed: 5}
	a, err := Bootstrap([][]Count{base, rl}, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Bootstrap([][]Count{base, rl}, opt)
	if !slices.Equal(a.Models[0].Curve, b.Models[0].Curve) || !reflect.DeepEqual(a.Pairs[0], b.Pairs[0]) {
		t.Error("same seed gave different results")
	}
	opt.Seed = 6
	c, _ := Bootstrap([][]Count{base, rl}, opt)
	if slices.Equal(a.Models[0].Curve, c.Models[0].Curve) {
		t.Error("different seeds gave identical intervals")
	}
	if len(a.Ks) != 8 || a.Ks[7] != 8 {
		t.Errorf("default ks = %v, want 1..8", a.Ks)
	}

	// A model compared with itself: the paired difference is exactly 0 in every draw.
	self, _ := Bootstrap([][]Count{base, base}, opt)
	for _, d := range self.Pairs[0].Diff {
		if d != (Estimate{}) {
			t.Fatalf("self difference %+v, want all zero", d)
		}
	}
	// Equal curves only touch: no crossover in any draw, and no significant lead.
	if x := self.Pairs[0].Crossover; x.Point.Found || x.FoundShare != 0 || x.Lo.Found || x.Hi.Found {
		t.Errorf("self crossover %+v, want none in every draw", x)
	}
	if p := self.Pairs[0]; p.BelowZeroFrom != 0 || len(p.Significant) != 0 {
		t.Errorf("self: base ahead from %d, significant %+v; want none", p.BelowZeroFrom, p.Significant)
	}
	// RL strictly better in every draw: no crossover.
	never, _ := Bootstrap([][]Count{{{4, 0}, {4, 0}}, {{4, 4}, {4, 1}}}, opt)
	if x := never.Pairs[0].Crossover; x.Point.Found || x.Lo.Found || x.Hi.Found || x.FoundShare != 0 {
		t.Errorf("crossover %+v, want none", x)
	}
	if never.Pairs[0].BelowZeroFrom != 0 {
		t.Errorf("BelowZeroFrom = %d, want 0", never.Pairs[0].BelowZeroFrom)
	}
	// Identical problems: no variation, the interval is the point.
	flat, _ := Bootstrap([][]Count{{{4, 1}, {4, 1}, {4, 1}}}, opt)
	if e := flat.Models[0].Pass1; e.Lo != 0.25 || e.Hi != 0.25 || e.Point != 0.25 {
		t.Errorf("constant pass@1 %+v, want 0.25 everywhere", e)
	}
}

func TestBootstrapErrors(t *testing.T) {
	ok := []Count{{4, 1}, {4, 2}}
	for name, tc := range map[string]struct {
		models [][]Count
		opt    BootstrapOptions
	}{
		"no models":   {nil, BootstrapOptions{}},
		"ragged":      {[][]Count{ok, ok[:1]}, BootstrapOptions{}},
		"k > n":       {[][]Count{ok}, BootstrapOptions{Ks: []int{5}}},
		"unsorted ks": {[][]Count{ok}, BootstrapOptions{Ks: []int{2, 1}}},
		"dup ks":      {[][]Count{ok}, BootstrapOptions{Ks: []int{1, 1}}},
		"level":       {[][]Count{ok}, BootstrapOptions{Level: 1.5}},
		"gap k":       {[][]Count{ok}, BootstrapOptions{GapK: 9}},
		"bad count":   {[][]Count{{{4, 5}}}, BootstrapOptions{}},
	} {
		if _, err := Bootstrap(tc.models, tc.opt); !errors.Is(err, ErrInput) {
			t.Errorf("%s: error %v, want ErrInput", name, err)
		}
	}
}

// BenchmarkBootstrap is the issue-6 target: 500 problems, n = 128, all 128 ks, 2,000 draws,
// two models, one core (go test -bench Bootstrap -cpu 1).
func BenchmarkBootstrap(b *testing.B) {
	r := rand.New(rand.NewPCG(21, 22))
	base, rl := randomCounts(r, 500, 128), randomCounts(r, 500, 128)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Bootstrap([][]Count{base, rl}, BootstrapOptions{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBootstrapMillionProblems is issue 30.7's shape: 1,000,000 problems, n = 4, two
// models, 2,000 draws. Draws over problem types (at most 25 here) make it cost about what 500
// problems do; one index per problem took minutes (2 × 10^9 draws).
func BenchmarkBootstrapMillionProblems(b *testing.B) {
	r := rand.New(rand.NewPCG(23, 24))
	base, rl := randomCounts(r, 1_000_000, 4), randomCounts(r, 1_000_000, 4)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Bootstrap([][]Count{base, rl}, BootstrapOptions{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestSignificantRanges(t *testing.T) {
	e := func(lo, hi float64) Estimate { return Estimate{Point: (lo + hi) / 2, Lo: lo, Hi: hi} }
	zero := Estimate{}
	ks := []int{1, 2, 4, 8, 16, 32}
	for _, tc := range []struct {
		name string
		diff []Estimate
		want []SignificantRange
		from int // BelowZeroFrom's rule: the last run is the base's and holds through
	}{
		{
			// Yue et al.'s shape: RL significantly ahead at small k, base at large k.
			name: "RL then base",
			diff: []Estimate{e(.1, .2), e(.05, .1), e(-.1, .1), e(-.2, -.1), e(-.3, -.1), e(-.3, -.2)},
			want: []SignificantRange{{OtherAhead, 1, 2, false}, {BaseAhead, 8, 32, true}}, from: 8,
		},
		{
			// Base significantly ahead only in the middle: not "ahead from".
			name: "base ahead in the middle only",
			diff: []Estimate{e(-.1, .1), e(-.2, -.1), e(-.2, -.1), e(-.1, .1), e(.01, .1), e(.01, .1)},
			want: []SignificantRange{{BaseAhead, 2, 4, false}, {OtherAhead, 16, 32, true}},
		},
		{
			// Both at 100% at the top: an interval of exactly zero does not end the base's lead.
			name: "base ahead, then equal",
			diff: []Estimate{e(.1, .2), e(-.1, .1), e(-.2, -.1), e(-.1, -.05), zero, zero},
			want: []SignificantRange{{OtherAhead, 1, 1, false}, {BaseAhead, 4, 8, true}}, from: 4,
		},
		{name: "nothing significant", diff: []Estimate{e(-.1, .1), e(-.1, .1), zero, zero, zero, zero}},
	} {
		got := significantRanges(ks, tc.diff)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		if from := baseAheadFrom(got); from != tc.from {
			t.Errorf("%s: base ahead from %d, want %d", tc.name, from, tc.from)
		}
	}
}

// The draws run on every core; the result must not depend on how many.
func TestBootstrapSameOnAnyCoreCount(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	models := [][]Count{randomCounts(r, 80, 32), randomCounts(r, 80, 32), randomCounts(r, 80, 32)}
	opt := BootstrapOptions{Draws: 450, Seed: 8}
	prev := runtime.GOMAXPROCS(1)
	one, err := Bootstrap(models, opt)
	runtime.GOMAXPROCS(max(4, prev))
	many, err2 := Bootstrap(models, opt)
	runtime.GOMAXPROCS(prev)
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	if !reflect.DeepEqual(one, many) {
		t.Error("one core and several cores gave different intervals")
	}
}
