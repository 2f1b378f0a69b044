package analysis

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

// diversityBenchAnswers is one model's answers on problems problems with n
// samples each: 40% correct, 5% without an answer, the rest incorrect
// integers drawn from a Zipf law over values values (with 400, every
// problem has more than EquivCap distinct answer texts and the cap applies;
// with 20, none has), one in eight written "\frac{2k}{2}" so that
// equivalence merges texts.
func diversityBenchAnswers(problems, n int, values uint64) ([]ProblemRow, map[int64][]store.Answer) {
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.3, 4, values-1)
	rows := make([]ProblemRow, problems)
	by := make(map[int64][]store.Answer, problems)
	for p := range problems {
		rows[p] = ProblemRow{ProblemID: int64(p), Key: fmt.Sprintf("p%d", p)}
		as := make([]store.Answer, n)
		for i := range as {
			as[i].SampleIndex = i
			switch u := rng.Float64(); {
			case u < 0.4:
				as[i].Correct, as[i].Extracted = true, "42"
			case u < 0.45:
			default:
				v := int(zipf.Uint64()) + 100
				if rng.IntN(8) == 0 {
					as[i].Extracted = fmt.Sprintf("\\frac{%d}{2}", 2*v)
				} else {
					as[i].Extracted = fmt.Sprint(v)
				}
			}
		}
		by[int64(p)] = as
	}
	return rows, by
}

// BenchmarkDiversity500x1024 is the answer-diversity statistics of one
// model at 500 problems × 1,024 samples, as the statistics job computes
// them after reading the answers: grouping by the math verifier's
// equivalence (the EquivCap = 48 most frequent texts per problem; the job's
// setting) and by text only, with wrong answers spread over 400 values (the
// worst case: the cap applies on every problem) or 20. The statistics job
// does this once per model.
// Run:
//
//	go test -run XXX -bench Diversity500x1024 -benchtime 3x ./internal/analysis/
func BenchmarkDiversity500x1024(b *testing.B) {
	mathEquiv := func(x, y string) bool { return vmath.Check(x, y, vmath.Options{}).Status == verify.Correct }
	for _, c := range []struct {
		name   string
		values uint64
		equiv  func(a, b string) bool
	}{{"400-values/math-equivalence", 400, mathEquiv}, {"400-values/text-only", 400, nil},
		{"20-values/math-equivalence", 20, mathEquiv}, {"20-values/text-only", 20, nil}} {
		rows, by := diversityBenchAnswers(500, 1024, c.values)
		b.Run(c.name, func(b *testing.B) {
			var md *ModelDiversity
			t0 := time.Now()
			for i := 0; i < b.N; i++ {
				var err error
				if md, err = diversityOf("m", rows, by, c.equiv); err != nil {
					b.Fatal(err)
				}
			}
			el := time.Since(t0) / time.Duration(b.N)
			b.ReportMetric(float64(el.Milliseconds()), "ms/model")
			b.ReportMetric(float64(el.Nanoseconds())/(500*1024), "ns/sample")
			b.Logf("%s: %v per model; %d problems over the cap, mean %.1f distinct answers, mean entropy %.2f bits",
				c.name, el.Round(time.Millisecond), md.Capped, md.MeanDistinct, md.MeanEntropy)
		})
	}
}
