package analysis

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/store"
)

// fixture: 4 problems, a base model and two checkpoints (n = 4).
func fixture() (store.Comparison, []store.Problem, map[int64][]store.Count) {
	s100, s200 := 100, 200
	c := store.Comparison{ID: 7, Name: "fx", Status: store.StatusReady, Runs: []store.Run{
		{ID: 1, ModelName: "base", Role: "base"},
		{ID: 2, ModelName: "ck100", Role: "checkpoint", Step: &s100},
		{ID: 3, ModelName: "ck200", Role: "checkpoint", Step: &s200},
	}}
	ps := []store.Problem{
		{ID: 10, Key: "a", Reference: "3", Subject: "Algebra", Level: "1"},       // guessable
		{ID: 11, Key: "b", Reference: `\frac12`, Subject: "Algebra", Level: "2"}, // base-only
		{ID: 12, Key: "c", Reference: "1234", Subject: "Geometry", Level: "10"},  // other-only
		{ID: 13, Key: "d", Reference: "x^2", Subject: "Geometry", Level: "2"},    // neither
		{ID: 14, Key: "e", Reference: "17", Subject: "Geometry", Level: "2"},     // not sampled by ck200
	}
	cnt := func(run int64, cs ...int) []store.Count {
		var out []store.Count
		for i, c := range cs {
			out = append(out, store.Count{RunID: run, ProblemID: int64(10 + i), N: 4, C: c})
		}
		return out
	}
	counts := map[int64][]store.Count{1: cnt(1, 4, 4, 0, 0, 1), 2: cnt(2, 2, 0, 1, 0, 1), 3: cnt(3, 4, 0, 3, 0)}
	return c, ps, counts
}

func TestComputeFiguresAndTests(t *testing.T) {
	c, ps, counts := fixture()
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Problems != 4 || rep.Dropped != 1 || rep.KMax != 4 || rep.Variant != VariantAll {
		t.Fatalf("problems %d dropped %d kmax %d variant %s", rep.Problems, rep.Dropped, rep.KMax, rep.Variant)
	}
	if len(rep.Guessable) != 1 || rep.Guessable[0].ProblemID != "a" || rep.Guessable[0].Rule != "small-integer" {
		t.Errorf("guessable %+v", rep.Guessable)
	}
	// base vs ck200: b is base-only (4/4 vs 0/4), c other-only (0/4 vs 3/4).
	p := rep.Pairs[1]
	if !slices.Equal(p.BaseOnly, []string{"b"}) || !slices.Equal(p.OtherOnly, []string{"c"}) {
		t.Fatalf("base-only %v other-only %v", p.BaseOnly, p.OtherOnly)
	}
	// Fisher 4/4 vs 0/4: two-sided p = 2 / C(8,4) = 2/70.
	if got := p.BaseOnlyTests[0].P; math.Abs(got-2.0/70) > 1e-12 || p.BaseOnlyTests[0].CouldBeLuck || p.BaseOnlySignificant != 1 {
		t.Errorf("base-only test %+v (significant %d), want p = 2/70", p.BaseOnlyTests[0], p.BaseOnlySignificant)
	}
	// 0/4 vs 3/4: p = (C(4,0)C(4,3) + C(4,3)C(4,0)) / C(8,3) = 8/56.
	if got := p.OtherOnlyTests[0].P; math.Abs(got-8.0/56) > 1e-12 || !p.OtherOnlyTests[0].CouldBeLuck || p.OtherOnlySignificant != 0 {
		t.Errorf("other-only test %+v, want p = 8/56, could be luck", p.OtherOnlyTests[0])
	}
	if rep.Rows[1].P[2] != p.BaseOnlyTests[0].P || rep.Rows[0].P[2] != -1 || rep.Rows[0].Guess == nil {
		t.Errorf("row p-values %v %v, guess %v", rep.Rows[1].P, rep.Rows[0].P, rep.Rows[0].Guess)
	}
	// Diff at k = 1: ck200 mean 7/16 − base 8/16.
	if d := p.Diff[0].Value; math.Abs(d-(-1.0/16)) > 1e-15 {
		t.Errorf("diff@1 = %v, want -1/16", d)
	}
	// Trajectory: base at step 0, then 100, 200; pass@4 = share solved.
	// Flows by hand: base solves a, b; ck100 and ck200 a, c.
	e := []string{}
	// pass@k at k = 1, 2, 4 (GroupKs(4)) as each model's curve has it.
	atK := func(v1, v2, v4 float64) []TrajectoryK {
		return []TrajectoryK{{K: 1, Value: v1}, {K: 2, Value: v2}, {K: 4, Value: v4}}
	}
	want := []TrajectoryPoint{{Model: "base", Step: 0, Pass1: 0.5, PassN: 0.5, AtK: atK(0.5, 0.5, 0.5), Gained: e, Lost: e, Regained: e, GainedVsBase: e, LostVsBase: e},
		{Model: "ck100", Step: 100, Pass1: 3.0 / 16, PassN: 0.5, AtK: atK(3.0/16, rep.Models[1].PassAtK[1].Value, 0.5), Gained: []string{"c"}, Lost: []string{"b"}, Regained: e,
			GainedVsBase: []string{"c"}, LostVsBase: []string{"b"}, model: 1},
		{Model: "ck200", Step: 200, Pass1: 7.0 / 16, PassN: 0.5, AtK: atK(7.0/16, rep.Models[2].PassAtK[1].Value, 0.5), Gained: e, Lost: e, Regained: e,
			GainedVsBase: []string{"c"}, LostVsBase: []string{"b"}, model: 2}}
	if !reflect.DeepEqual(rep.Trajectory, want) {
		t.Errorf("trajectory %+v\nwant %+v", rep.Trajectory, want)
	}
	// UpSet by hand: a {base, ck100, ck200}, b {base}, c {ck100, ck200}, d {}.
	got := map[string]int{}
	for _, x := range rep.Intersections {
		b, _ := json.Marshal(x.Members)
		got[string(b)] = x.Count
	}
	if len(got) != 4 || got[`["base","ck100","ck200"]`] != 1 || got[`["base"]`] != 1 || got[`["ck100","ck200"]`] != 1 || got[`[]`] != 1 {
		t.Errorf("intersections %v", got)
	}
	// Breakdowns: subjects Algebra, Geometry; levels 1, 2, 10 in numeric order.
	var groups []string
	for _, b := range rep.Breakdowns {
		groups = append(groups, b.By+":"+b.Group)
	}
	if !slices.Equal(groups, []string{"subject:Algebra", "subject:Geometry", "level:1", "level:2", "level:10"}) {
		t.Errorf("breakdown groups %v", groups)
	}
	if b := rep.Breakdowns[0]; b.Problems != 2 || b.Solved.BaseOnly != 1 || b.Models[0].PassAtK[0].Value != 1 {
		t.Errorf("Algebra breakdown %+v", b)
	}
	// Cover@τ of base: c/n = 1, 1, 0, 0.
	if cv := rep.Models[0].Cover; cv[0].Value != 1 || cv[20].Value != 0.5 || cv[40].Value != 0.5 {
		t.Errorf("cover %v %v %v", cv[0], cv[20], cv[40])
	}
}

func TestExcludeGuessableAndBiased(t *testing.T) {
	c, ps, counts := fixture()
	rep, err := ComputeWith(c, ps, counts, Options{ExcludeGuessable: true, Biased: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Variant != VariantUnguessable || rep.Problems != 3 || rep.Excluded != 1 || rep.Rows[0].Key != "b" {
		t.Fatalf("variant %s problems %d excluded %d", rep.Variant, rep.Problems, rep.Excluded)
	}
	all, _ := Compute(c, ps, counts)
	if rep.Hash() == all.Hash() {
		t.Error("variants share a statistics hash")
	}
	// Biased pass@2 of base on b, c, d (c/n = 1, 0, 0) = 1/3.
	if v := rep.Models[0].PassAtKBiased[1].Value; math.Abs(v-1.0/3) > 1e-15 || rep.Pairs[0].CrossoverBiased == nil {
		t.Errorf("biased pass@2 %v", v)
	}
	if all.Models[0].PassAtKBiased != nil {
		t.Error("biased curve without Options.Biased")
	}
}

func TestStatsAttachAndStale(t *testing.T) {
	c, ps, counts := fixture()
	rep, _ := Compute(c, ps, counts)
	answers := map[int64]map[int64][]store.Answer{2: {}}
	for j, row := range rep.Rows {
		var as []store.Answer
		for i := range 4 {
			a := store.Answer{SampleIndex: i, Correct: i < rep.Rows[j].Counts[1].C, Extracted: "r"}
			if !a.Correct {
				a.Extracted = "w"
				if i%2 == 1 {
					a.Extracted = " w " // same class as "w" once whitespace goes
				}
			}
			as = append(as, a)
		}
		answers[2][row.ProblemID] = as
	}
	s, err := ComputeStats(rep, answers, StatsOptions{Draws: 200})
	if err != nil {
		t.Fatal(err)
	}
	if s.Maj[0] != nil || s.Maj[2] != nil || s.Maj[1] == nil {
		t.Fatalf("maj curves %v", s.Maj)
	}
	// ck100: a 2/4 correct (tie with 2 "w" at k=4: not a majority), b, c, d as votes.
	r, w := passk.Vote{Class: 0, Correct: true}, passk.Vote{Class: 1}
	want, _ := passk.MajCurve([][]passk.Vote{{r, r, w, w}, {w, w, w, w}, {r, w, w, w}, {w, w, w, w}}, []int{1, 2, 4})
	if !slices.Equal(s.Maj[1].Values, want) {
		t.Errorf("maj@k %v, want %v", s.Maj[1].Values, want)
	}
	data, _ := json.Marshal(s)
	row := store.Stats{Hash: rep.Hash(), Status: StatsReady, Data: data}
	rep.AttachStats(row)
	if rep.Stats.Status != StatsReady || rep.Models[1].Pass1CI == nil || len(rep.Models[0].PassAtKCI) != 4 ||
		rep.Pairs[0].CrossoverCI == nil || rep.Pairs[0].Diff[3].CI == nil || rep.Trajectory[1].Pass1CI == nil || len(rep.Models[1].MajAtK) != 3 {
		t.Fatalf("attached: %+v", rep.Stats)
	}
	if ci := rep.Models[0].Pass1CI; !(ci.Lo <= rep.Models[0].Pass1 && rep.Models[0].Pass1 <= ci.Hi) {
		t.Errorf("pass@1 CI %+v misses %v", ci, rep.Models[0].Pass1)
	}
	counts[1][0].C = 3 // the counts change: the cache is stale
	again, _ := Compute(c, ps, counts)
	again.AttachStats(row)
	if again.Stats.Status != StatsPending || again.Models[0].Pass1CI != nil {
		t.Errorf("stale cache attached: %+v", again.Stats)
	}
}

// Leaving out the problems reviewers judged grading errors: problem b
// (base-only against ck100) goes, the solved sets and pass@1 follow.
func TestExcludeReviewedProblems(t *testing.T) {
	c, ps, counts := fixture()
	rep, err := ComputeWith(c, ps, counts, Options{ExcludeProblems: map[int64]bool{11: true, 99: true}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Variant != VariantReviewed || rep.ExcludedReviewed != 1 || rep.Problems != 3 {
		t.Fatalf("variant %q, excluded %d, problems %d; want reviewed, 1, 3", rep.Variant, rep.ExcludedReviewed, rep.Problems)
	}
	want := Solved{Both: 1, BaseOnly: 0, OtherOnly: 1, Neither: 1}
	if rep.Pairs[0].Solved != want {
		t.Errorf("solved %+v, want %+v", rep.Pairs[0].Solved, want)
	}
	if math.Abs(rep.Models[0].Pass1-1.0/3) > 1e-12 { // c/n = 4/4, 0/4, 0/4
		t.Errorf("base pass@1 %v, want 1/3", rep.Models[0].Pass1)
	}
	if rep.Hash() == "" {
		t.Error("no stats hash")
	}
	// Excluding nothing that is kept leaves the default variant.
	rep, err = ComputeWith(c, ps, counts, Options{ExcludeProblems: map[int64]bool{14: true}})
	if err != nil || rep.Variant != VariantAll || rep.ExcludedReviewed != 0 {
		t.Errorf("excluding a dropped problem: variant %q, excluded %d (%v)", rep.Variant, rep.ExcludedReviewed, err)
	}
}

func TestChartKs(t *testing.T) {
	if got := ChartKs(10); !slices.Equal(got, passk.AllKs(10)) {
		t.Errorf("ChartKs(10) = %v", got)
	}
	ks := ChartKs(1024)
	if len(ks) != 64+4*8-1+1 || ks[63] != 64 || ks[64] != 70 || ks[len(ks)-1] != 1024 || !slices.IsSorted(ks) {
		t.Errorf("ChartKs(1024) has %d ks: %v", len(ks), ks)
	}
	if ks := ChartKs(100); ks[len(ks)-1] != 100 || ks[len(ks)-2] != 99 {
		t.Errorf("ChartKs(100) = %v", ks)
	}
}

// G-Pass@1 at any τ is pass@1 (one sample: right or not), and at k max
// with τ = 1 it is the share of problems whose every sample is right when
// k = n (fixture: n = 4 everywhere).
func TestGPassInReport(t *testing.T) {
	c, ps, counts := fixture()
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.Models {
		if len(m.GPass) == 0 || m.GPass[0].K != 1 {
			t.Fatalf("%s: G-Pass %+v", m.Name, m.GPass)
		}
		for _, v := range m.GPass[0].Values {
			if math.Abs(v-m.Pass1) > 1e-12 {
				t.Errorf("%s: G-Pass@1 %v, pass@1 %v", m.Name, v, m.Pass1)
			}
		}
		last := m.GPass[len(m.GPass)-1]
		all := 0
		for _, x := range m.Counts.All() {
			if x.C == x.N {
				all++
			}
		}
		if last.K != 4 || math.Abs(last.Values[len(last.Values)-1]-float64(all)/float64(m.Counts.Len())) > 1e-12 {
			t.Errorf("%s: pass^4 %v, want %d of %d problems", m.Name, last.Values, all, m.Counts.Len())
		}
	}
}
