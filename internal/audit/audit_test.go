package audit

import (
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/reach-lab/reach/internal/passk"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// Wilson against values worked out by hand: 0 of 10 has upper bound
// z²/(n+z²) = 3.84146/13.84146 = 0.277533; 1 of 3: centre (1/3 + 3.84146/6) /
// (1 + 3.84146/3) = 0.426916, half-width 1.95996·sqrt(2/27 + 3.84146/36) /
// 2.28049 = 0.365424.
func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 10, 0, 0.2775327998628892},
		{1, 3, 0.06149194472039621, 0.7923403991979522},
		{1, 2, 0.09453120573423074, 0.9054687942657693},
		{3, 12, 0.08894166839405471, 0.5323053349335657},
		{5, 5, 0.5655175352168251, 1}, // n/(n+z²) = 5/8.84146
	} {
		iv := Wilson(c.k, c.n)
		if !iv.Computed || !near(iv.Lo, c.lo) || !near(iv.Hi, c.hi) || !near(iv.P, float64(c.k)/float64(c.n)) {
			t.Errorf("Wilson(%d, %d) = %+v, want [%v, %v]", c.k, c.n, iv, c.lo, c.hi)
		}
	}
	if iv := Wilson(0, 0); iv.Computed || iv.Lo != 0 || iv.Hi != 1 {
		t.Errorf("Wilson(0, 0) = %+v", iv)
	}
}

func TestRandomOrdinals(t *testing.T) {
	a := RandomOrdinals(1000, 50, 7)
	if len(a) != 50 || !slices.IsSorted(a) || !slices.Equal(a, RandomOrdinals(1000, 50, 7)) {
		t.Fatalf("50 of 1000: %v", a)
	}
	if slices.Equal(a, RandomOrdinals(1000, 50, 8)) {
		t.Error("another seed drew the same positions")
	}
	for i, x := range a {
		if x < 0 || x >= 1000 || (i > 0 && a[i-1] == x) {
			t.Fatalf("position %d: %d (duplicate or out of range)", i, x)
		}
	}
	if got := RandomOrdinals(4, 10, 1); !slices.Equal(got, []int64{0, 1, 2, 3}) {
		t.Errorf("m > n: %v, want all", got)
	}
	if got := RandomOrdinals(4, 0, 1); len(got) != 0 {
		t.Errorf("m = 0: %v", got)
	}
	// Every position is drawn about equally often: 20,000 draws of 3 of 6,
	// each position expected 10,000 times.
	var hits [6]int
	for s := range uint64(20000) {
		for _, x := range RandomOrdinals(6, 3, s) {
			hits[x]++
		}
	}
	for i, h := range hits {
		if h < 9500 || h > 10500 {
			t.Errorf("position %d drawn %d times of 20,000, want about 10,000", i, h)
		}
	}
}

func TestDecidingAndDisagrees(t *testing.T) {
	if !Deciding("incorrect", []string{RegionBoth, RegionOtherOnly}) || !Deciding("unparseable", []string{RegionBaseOnly}) {
		t.Error("incorrect on an RL-only problem, unparseable on a base-only one are deciding")
	}
	if Deciding("correct", []string{RegionBaseOnly}) || Deciding("incorrect", []string{RegionBoth, RegionNeither}) {
		t.Error("correct samples and problems of both/neither are not deciding")
	}
	if !Disagrees("incorrect", Correct) || !Disagrees("unparseable", Correct) || !Disagrees("correct", Incorrect) ||
		Disagrees("correct", Correct) || Disagrees("incorrect", Unsure) || Disagrees("correct", Unsure) {
		t.Error("Disagrees")
	}
	if Requests(7, 17, 100) != 24 || Requests(7, 17, 5) != 12 || Requests(0, 0, 10) != 0 {
		t.Error("Requests")
	}
	if Delta(false, Correct) != 1 || Delta(true, Incorrect) != -1 || Delta(true, Correct) != 0 || Delta(false, Unsure) != 0 {
		t.Error("Delta")
	}
}

// The flip on the jobs test's fixture: base p1 (4,2) p2 (4,1) p3 (4,0), RL
// p1 (4,4) p2 (4,2) p3 (4,1). RL leads at every k (no k*), RL-only = {p3}.
// Flipping base p3 up one and RL p3 down one: base pass@k at k = 1..4 is
// 1/3, 11/18, 5/6, 1; RL 1/2, 11/18, 2/3, 2/3. Base behind at 1, equal at
// 2, ahead from 3: k* = 2 (the curves are equal there), base-only {p3}.
func TestFlip(t *testing.T) {
	models := [][]passk.Count{
		{{N: 4, C: 2}, {N: 4, C: 1}, {N: 4, C: 0}},
		{{N: 4, C: 4}, {N: 4, C: 2}, {N: 4, C: 1}},
	}
	ps, err := Flip(models, [][]int{{0, 0, 1}, {0, 0, -1}})
	if err != nil {
		t.Fatal(err)
	}
	want := Pair{Other: 1, FoundBefore: false, FoundAfter: true, KBefore: 0, KAfter: 2,
		BaseOnlyBefore: 0, BaseOnlyAfter: 1, OtherOnlyBefore: 1, OtherOnlyAfter: 0}
	if len(ps) != 1 {
		t.Fatalf("%d pairs", len(ps))
	}
	got := ps[0]
	got.BandBefore, got.BandAfter, got.KMax = passk.CrossoverBand{}, passk.CrossoverBand{}, 0
	if !reflect.DeepEqual(got, want) || !ps[0].Changed() {
		t.Errorf("flip: %+v, want %+v", got, want)
	}
	// k*'s intervals are the paired bootstrap's on the counts before and
	// after, with their points the k* above.
	b := ps[0].BandAfter
	if b.Point.Found != true || b.Point.K != 2 || ps[0].BandBefore.Point.Found {
		t.Errorf("bands' points: before %+v, after %+v", ps[0].BandBefore.Point, b.Point)
	}
	flipped := [][]passk.Count{
		{{N: 4, C: 2}, {N: 4, C: 1}, {N: 4, C: 1}},
		{{N: 4, C: 4}, {N: 4, C: 2}, {N: 4, C: 0}},
	}
	direct, err := passk.Bootstrap(flipped, passk.BootstrapOptions{Draws: FlipDraws, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d := direct.Pairs[0].Crossover; d.Lo != b.Lo || d.Hi != b.Hi || d.FoundShare != b.FoundShare {
		t.Errorf("after-flip band %+v, the bootstrap of the flipped counts gives %+v", b, d)
	}
	if ps[0].KMax != 4 {
		t.Errorf("k max %d, want 4", ps[0].KMax)
	}
	if b.FoundShare <= 0 || b.FoundShare >= 1 {
		t.Errorf("found share %v: with three problems some draws have k* and some do not", b.FoundShare)
	}
	// No deltas: nothing changes.
	ps, err = Flip(models, nil)
	if err != nil || ps[0].Changed() || ps[0].OtherOnlyAfter != 1 {
		t.Errorf("no flip: %+v, %v", ps, err)
	}
	if models[0][2].C != 0 {
		t.Error("Flip changed its input")
	}
	if _, err := Flip(models, [][]int{{0, 0, -1}}); err == nil {
		t.Error("a count below 0 must be an error")
	}
}
