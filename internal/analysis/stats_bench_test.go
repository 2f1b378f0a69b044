package analysis

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/answerclass"
	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

// statsBenchData is a comparison of models models on problems problems
// with n samples each, with the samples' answers: per problem a success
// rate drawn uniformly (the same problem is harder or easier for every
// model, the later models a little better), 5% of the wrong samples
// without an answer, the other wrong answers integers from a Zipf law
// over 100 values per problem, one in eight written "\frac{2v}{2}" so that
// equivalence merges texts.
func statsBenchData(models, problems, n int) (store.Comparison, []store.Problem, map[int64][]store.Count, map[int64]map[int64][]store.Answer) {
	rng := rand.New(rand.NewPCG(5, 6))
	c := store.Comparison{ID: 1, Name: "bench", Status: store.StatusReady}
	for m := range models {
		role := "checkpoint"
		switch m {
		case 0:
			role = "base"
		case models - 1:
			role = "rl"
		}
		step := 100 * m
		c.Runs = append(c.Runs, store.Run{ID: int64(m + 1), ModelName: fmt.Sprintf("m%d", m), Role: role, Step: &step, HasTexts: true})
	}
	ps := make([]store.Problem, problems)
	rate := make([]float64, problems)
	for p := range ps {
		ref := fmt.Sprint(1000 + p)
		if p%4 == 0 {
			ref = fmt.Sprint(p % 10) // guessable, as many MATH500 answers are
		}
		ps[p] = store.Problem{ID: int64(1000 + p), Key: fmt.Sprintf("p%d", p), Reference: ref, Subject: []string{"Algebra", "Geometry"}[p%2], Level: fmt.Sprint(1 + p%5), Kind: "math"}
		rate[p] = rng.Float64()
	}
	counts := map[int64][]store.Count{}
	answers := map[int64]map[int64][]store.Answer{}
	for m, r := range c.Runs {
		zipf := rand.NewZipf(rng, 1.2, 2, 99)
		answers[r.ID] = map[int64][]store.Answer{}
		for p, pr := range ps {
			rt := min(1, rate[p]*(1+0.1*float64(m)))
			as := make([]store.Answer, n)
			correct := 0
			for i := range as {
				as[i].SampleIndex = i
				switch u := rng.Float64(); {
				case u < rt:
					as[i].Correct, as[i].Extracted = true, pr.Reference
					correct++
				case rng.IntN(20) == 0:
				default:
					v := int(zipf.Uint64()) + 1
					if rng.IntN(8) == 0 {
						as[i].Extracted = fmt.Sprintf("\\frac{%d}{2}", 2*v)
					} else {
						as[i].Extracted = fmt.Sprint(v)
					}
				}
			}
			answers[r.ID][pr.ID] = as
			counts[r.ID] = append(counts[r.ID], store.Count{RunID: r.ID, ProblemID: pr.ID, N: n, C: correct})
		}
	}
	return c, ps, counts, answers
}

// BenchmarkStats6x500x1024 is the statistics job's computation (issue 11:
// under 5 s in all, with reading the answers from Postgres) at 6 models ×
// 500 problems × 1,024 samples: for the report and its variant without
// guessable problems, the bootstrap (2,000 draws), maj@k and answer
// diversity, grouping answers by the math verifier's equivalence as the job
// does. Reading from Postgres is not included (bin/reach-bench measures the
// whole job).
// Run:
//
//	go test -run XXX -bench Stats6x500x1024 -benchtime 3x ./internal/analysis/
func BenchmarkStats6x500x1024(b *testing.B) {
	c, ps, counts, answers := statsBenchData(6, 500, 1024)
	mathEquiv := func(x, y string) bool { return vmath.Check(x, y, vmath.Options{}).Status == verify.Correct }
	b.ResetTimer()
	t0 := time.Now()
	for i := 0; i < b.N; i++ {
		for _, opt := range []Options{{}, {ExcludeGuessable: true}} {
			rep, err := ComputeWith(c, ps, counts, opt)
			if err != nil {
				b.Fatal(err)
			}
			if opt.ExcludeGuessable && rep.Excluded == 0 {
				b.Fatal("no guessable problems")
			}
			if _, err := ComputeStats(rep, answers, StatsOptions{Equiv: mathEquiv}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(time.Since(t0).Milliseconds())/float64(b.N), "ms/job")
}

// The statistics job groups each problem's answers once, on every core,
// and reuses them for every variant (StatsMemo): maj@k and answer
// diversity must be what grouping each variant's problems one by one gives,
// to the bit, whatever the number of cores.
func TestStatsMemoSameFigures(t *testing.T) {
	c, ps, counts, answers := statsBenchData(3, 40, 64)
	calls := 0
	equiv := func(x, y string) bool {
		calls++
		return vmath.Check(x, y, vmath.Options{}).Status == verify.Correct
	}
	var lock sync.Mutex
	lockedEquiv := func(x, y string) bool { lock.Lock(); defer lock.Unlock(); return equiv(x, y) }
	memo := NewStatsMemo()
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for _, opt := range []Options{{}, {ExcludeGuessable: true}} {
			rep, err := ComputeWith(c, ps, counts, opt)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ComputeStats(rep, answers, StatsOptions{Draws: 50, Equiv: lockedEquiv, Memo: memo})
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := ComputeStats(rep, answers, StatsOptions{Draws: 50, Equiv: lockedEquiv})
			if err != nil {
				t.Fatal(err)
			}
			// Each problem grouped once, every model's answers together, as the page groups them.
			parts := map[int64]*answerclass.Partition{}
			for _, row := range rep.Rows {
				var perRun [][]store.Answer
				for _, mr := range rep.Models {
					perRun = append(perRun, answers[mr.RunID][row.ProblemID])
				}
				parts[row.ProblemID] = partitionOf(perRun, equiv)
			}
			for m, mr := range rep.Models {
				var problems [][]passk.Vote
				for _, row := range rep.Rows {
					problems = append(problems, votesIn(answers[mr.RunID][row.ProblemID], parts[row.ProblemID]))
				}
				want, err := passk.MajCurve(problems, GroupKs(rep.KMax))
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.Maj[m].Values, want) || !slices.Equal(fresh.Maj[m].Values, want) {
					t.Errorf("%d cores, %s, model %d: maj@k %v (fresh memo %v), want %v", procs, rep.Variant, m, got.Maj[m].Values, fresh.Maj[m].Values, want)
				}
				div, err := diversityFrom(mr.Name, rep.Rows, answers[mr.RunID], func(row ProblemRow) answerGroups {
					var g answerGroups
					g.sizes, g.noAnswer, g.capped = classesIn(answers[mr.RunID][row.ProblemID], parts[row.ProblemID])
					return g
				})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got.Diversity[m], div) || !reflect.DeepEqual(fresh.Diversity[m], div) {
					t.Errorf("%d cores, %s, model %d: diversity differs", procs, rep.Variant, m)
				}
			}
		}
		runtime.GOMAXPROCS(prev)
	}
	if calls == 0 {
		t.Fatal("equivalence never asked")
	}
}
