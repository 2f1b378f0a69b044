// Package audit holds the pure parts of the verifier audit (issue 25): a
// second opinion, from the comparison's judge model, on the samples that
// decide the figures. It chooses the samples, words the prompt, computes
// the disagreement rate with its binomial interval and recomputes k* and
// the solved sets with the disagreements flipped. Nothing here does I/O.
//
// Sources: Yue et al. 2025 (arXiv 2504.13837) for k* and the solved sets;
// Wilson 1927 ("Probable inference, the law of succession, and statistical
// inference", JASA 22:209) for the score interval.
package audit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/reach-lab/reach/internal/passk"
)

// Strata of an audited sample.
const (
	// StratumDeciding: graded incorrect or unparseable on a problem that is
	// base-only or RL-only in some pair. If such a sample is really right,
	// the problem moves to "both" and the solved sets change.
	StratumDeciding = "deciding"
	// StratumRandom: one of the m samples drawn at random from all others.
	StratumRandom = "random"
)

// Verdicts of the judge on "does the final answer equal the reference?".
const (
	Correct   = "correct"
	Incorrect = "incorrect"
	Unsure    = "unsure"
)

// Region of a problem in one pair (base model vs one other model).
const (
	RegionBoth      = "both"
	RegionBaseOnly  = "base-only"
	RegionOtherOnly = "other-only"
	RegionNeither   = "neither"
)

// Deciding reports whether a sample with Reach's status (correct,
// incorrect, unparseable) on a problem whose regions over the comparison's
// pairs are regions belongs to the deciding stratum: graded incorrect or
// unparseable on a problem that is base-only or RL-only in at least one
// pair.
func Deciding(status string, regions []string) bool {
	if status != "incorrect" && status != "unparseable" {
		return false
	}
	return slices.Contains(regions, RegionBaseOnly) || slices.Contains(regions, RegionOtherOnly)
}

// RandomOrdinals draws min(m, n) distinct positions out of 0..n-1 without
// replacement (Floyd's algorithm), seeded, in ascending order: the random
// stratum is the samples at these positions of the rest, ordered by run,
// problem and sample index. The same (n, m, seed) gives the same positions.
func RandomOrdinals(n int64, m int, seed uint64) []int64 {
	if n <= 0 || m <= 0 {
		return []int64{}
	}
	if int64(m) >= n {
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(i)
		}
		return out
	}
	r := rand.New(rand.NewPCG(seed, 0x5eed_a0d1))
	chosen := make(map[int64]struct{}, m)
	for j := n - int64(m); j < n; j++ {
		t := r.Int64N(j + 1)
		if _, ok := chosen[t]; ok {
			t = j
		}
		chosen[t] = struct{}{}
	}
	out := make([]int64, 0, m)
	for t := range chosen {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// Requests is the number of judge requests an audit costs: one per deciding
// sample plus one per sample of the random stratum (min(m, rest)).
func Requests(deciding, rest int64, m int) int64 {
	return deciding + min(int64(max(m, 0)), max(rest, 0))
}

// Disagrees reports whether the judge's verdict contradicts Reach's status:
// Reach correct and the judge incorrect, or Reach incorrect/unparseable and
// the judge correct. An unsure judge never disagrees.
func Disagrees(status, verdict string) bool {
	switch verdict {
	case Correct:
		return status != "correct"
	case Incorrect:
		return status == "correct"
	}
	return false
}

// Interval is a proportion with a two-sided confidence interval.
type Interval struct {
	K, N     int     // successes out of trials
	P        float64 // K/N (0 when N = 0)
	Lo, Hi   float64 // the interval's bounds (0 and 1 when N = 0)
	Level    float64 // confidence level, e.g. 0.95
	Computed bool    // false when N = 0
}

// z95 is the 0.975 quantile of the standard normal distribution.
const z95 = 1.959963984540054

// Wilson returns the 95% Wilson score interval of k successes in n trials
// (Wilson 1927): centre (p + z²/2n) / (1 + z²/n), half-width
// z·sqrt(p(1−p)/n + z²/4n²) / (1 + z²/n), with z = 1.95996. Unlike the
// normal approximation it stays inside [0, 1] and is not empty at k = 0.
// n = 0 gives the uninformative [0, 1] with Computed false.
func Wilson(k, n int) Interval {
	iv := Interval{K: k, N: n, Level: 0.95, Hi: 1}
	if n <= 0 {
		return iv
	}
	z := z95
	nf := float64(n)
	p := float64(k) / nf
	d := 1 + z*z/nf
	c := (p + z*z/(2*nf)) / d
	h := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / d
	iv.P, iv.Lo, iv.Hi, iv.Computed = p, max(0, c-h), min(1, c+h), true
	if k == 0 {
		iv.Lo = 0
	}
	if k == n {
		iv.Hi = 1
	}
	return iv
}

// Pair is the result of one pair (the base model and one other model)
// before and after the flip.
type Pair struct {
	Other int // index of the other model
	// Found and K: the crossover k* (passk.Crossover over k = 1..k max);
	// K is 0 when not Found.
	FoundBefore, FoundAfter bool
	KBefore, KAfter         float64
	// BandBefore and BandAfter are k*'s 95% paired-bootstrap intervals
	// over problems (passk.Bootstrap, FlipDraws draws, one seed for both):
	// a flip that moves k* within them moves it less than the problem
	// set's own sampling error does.
	BandBefore, BandAfter passk.CrossoverBand
	KMax                  int // the largest k of the curves: the smallest n
	// Solved sets (passk.Solved): problems solved by the base model only
	// and by the other model only.
	BaseOnlyBefore, BaseOnlyAfter   int
	OtherOnlyBefore, OtherOnlyAfter int
}

// Changed reports whether flipping moved k* or either solved set.
func (p Pair) Changed() bool {
	return p.FoundBefore != p.FoundAfter || math.Abs(p.KBefore-p.KAfter) > 1e-9 ||
		p.BaseOnlyBefore != p.BaseOnlyAfter || p.OtherOnlyBefore != p.OtherOnlyAfter
}

// FlipDraws is the number of bootstrap draws behind Pair's k* intervals.
const FlipDraws = 1000

// Flip recomputes k* and the solved sets of every pair (model 0, the base
// model, against each other model) with the disagreements flipped.
// models[m][j] is model m's count on problem j (every model covers the same
// problems, as the report keeps them); delta[m][j] is added to C: +1 for
// each sample the judge calls correct that Reach does not count, −1 for
// each it calls incorrect that Reach counts (nil delta[m] = no change). k
// max is the smallest n, as in the report. Errors (wrapping passk.ErrInput)
// for ragged input or a flip that leaves C outside 0..N.
func Flip(models [][]passk.Count, delta [][]int) ([]Pair, error) {
	if len(models) < 2 {
		return nil, fmt.Errorf("%w: flip needs the base model and at least one other", passk.ErrInput)
	}
	after := make([][]passk.Count, len(models))
	for m, cs := range models {
		after[m] = slices.Clone(cs)
		if m < len(delta) && delta[m] != nil {
			if len(delta[m]) != len(cs) {
				return nil, fmt.Errorf("%w: model %d: %d deltas for %d problems", passk.ErrInput, m, len(delta[m]), len(cs))
			}
			for j, d := range delta[m] {
				after[m][j].C += d
				if after[m][j].C < 0 || after[m][j].C > after[m][j].N {
					return nil, fmt.Errorf("%w: model %d problem %d: flipped count %d of %d", passk.ErrInput, m, j, after[m][j].C, after[m][j].N)
				}
			}
		}
	}
	kStar := func(ms [][]passk.Count, o int) (bool, float64, int, int, error) {
		bc, err := passk.CurveAll(ms[0])
		if err != nil {
			return false, 0, 0, 0, err
		}
		oc, err := passk.CurveAll(ms[o])
		if err != nil {
			return false, 0, 0, 0, err
		}
		// The report's k max is the smallest curve length over all models.
		kmax := len(bc)
		for _, cs := range ms {
			c, err := passk.CurveAll(cs)
			if err != nil {
				return false, 0, 0, 0, err
			}
			kmax = min(kmax, len(c))
		}
		cr, err := passk.Crossover(passk.AllKs(kmax), bc[:kmax], oc[:kmax])
		if err != nil {
			return false, 0, 0, 0, err
		}
		sets, err := passk.Solved(ms[0], ms[o])
		if err != nil {
			return false, 0, 0, 0, err
		}
		return cr.Found, cr.K, sets.BaseOnly, sets.OtherOnly, nil
	}
	kmax := 0
	bands := func(ms [][]passk.Count) ([]passk.PairBands, error) {
		b, err := passk.Bootstrap(ms, passk.BootstrapOptions{Draws: FlipDraws, Seed: 1})
		kmax = b.NMin
		return b.Pairs, err
	}
	before, err := bands(models)
	if err != nil {
		return nil, err
	}
	afterBands, err := bands(after)
	if err != nil {
		return nil, err
	}
	out := make([]Pair, 0, len(models)-1)
	for o := 1; o < len(models); o++ {
		p := Pair{Other: o, BandBefore: before[o-1].Crossover, BandAfter: afterBands[o-1].Crossover, KMax: kmax}
		var err error
		if p.FoundBefore, p.KBefore, p.BaseOnlyBefore, p.OtherOnlyBefore, err = kStar(models, o); err != nil {
			return nil, err
		}
		if p.FoundAfter, p.KAfter, p.BaseOnlyAfter, p.OtherOnlyAfter, err = kStar(after, o); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// Delta is the change a judge's verdict makes to a model's count on a
// problem when it is flipped: +1 when the judge says correct and Reach does
// not count the sample, −1 when it says incorrect and Reach counts it, else
// 0. counted is whether the sample is among the problem's C (a sample
// graded correct by a fallback rule is not, under the strict policy).
func Delta(counted bool, verdict string) int {
	switch {
	case verdict == Correct && !counted:
		return 1
	case verdict == Incorrect && counted:
		return -1
	}
	return 0
}

// DefaultTemplate is the prompt the audit sends the judge for each sample
// (the template language of sampling prompts over .Problem, .Reference,
// .Completion, .Subject, .Level). It asks only whether the final answer
// equals the reference answer, not about the reasoning, and wants a VERDICT
// line sampling.ParseVerdict reads (CORRECT maps to its "valid", INCORRECT
// to "flawed").
const DefaultTemplate = `You are checking an automatic grader. Decide only whether the FINAL ANSWER of the solution below equals the reference answer (mathematically equivalent forms count as equal: 1/2 = 0.5 = \frac{1}{2}; units or formatting alone do not make it different). Ignore whether the reasoning is right.

Problem:
{{.Problem}}

Reference answer:
{{.Reference}}

Solution (between the markers):
<<<ANSWER-CHECK
{{.Completion}}
ANSWER-CHECK>>>

Reply with one line "REASON: <one sentence naming the final answer you found>" followed by one line "VERDICT: CORRECT" (the final answer equals the reference), "VERDICT: INCORRECT" (it differs, or there is no final answer) or "VERDICT: UNSURE".`

// FromJudge maps sampling.ParseVerdict's verdicts (valid, flawed, unsure)
// to the audit's (correct, incorrect, unsure).
func FromJudge(v string) string {
	switch v {
	case "valid":
		return Correct
	case "flawed":
		return Incorrect
	}
	return Unsure
}
