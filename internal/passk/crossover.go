package passk

import (
	"fmt"
	"math"
)

// CrossoverTol is the absolute tolerance under which two curve values count as equal: it absorbs
// float64 rounding in means of mathematically equal curves (e.g. both at exactly 100%).
const CrossoverTol = 1e-12

// Lead says which of two curves is ahead at one k.
type Lead int8

// The three leads; Even means equal within CrossoverTol.
const (
	OtherAhead Lead = -1
	Even       Lead = 0
	BaseAhead  Lead = 1
)

func leadOf(d float64) Lead {
	switch {
	case d > CrossoverTol:
		return BaseAhead
	case d < -CrossoverTol:
		return OtherAhead
	}
	return Even
}

// Crossing is one change of lead between the two curves.
type Crossing struct {
	// K is where base − other crosses zero, interpolated linearly on log2 k between From and To.
	K float64
	// From is the last sampled k with the old lead; To the next sampled k (where the new lead,
	// or a tie, is first seen).
	From, To int
	// Lead is who is ahead after the crossing (BaseAhead or OtherAhead).
	Lead Lead
}

// CrossoverResult describes how the base model's pass@k curve and another model's relate over k.
type CrossoverResult struct {
	// Found is true when the base curve gets ahead and stays ahead through the largest sampled k:
	// it is strictly ahead at some sampled k >= K and behind at none (equal values, e.g. both
	// at 100% at the top, do not break the stretch). Curves that only touch or are equal
	// throughout have no crossover.
	Found bool
	// K is the crossover point k*: where the base curve enters that final stretch, interpolated
	// linearly on log2 k between the last sampled k where base was behind and the next one
	// (exactly that next k when the curves are equal there). K = ks[0] when the base curve is
	// never behind. 0 when not Found.
	K float64
	// AtSampledK is the first sampled k >= K at which base is strictly ahead (0 when not Found).
	AtSampledK int
	// End is who is ahead at the largest sampled k.
	End Lead
	// Since is the first sampled k from which the curves keep End's lead through the largest
	// sampled k: the leader is never behind from there on (for End = Even, the first k of the
	// trailing run of equal values).
	Since int
	// Crossings lists every change of lead in k order (ties between two leads do not count as
	// a change). With several crossings the curves cross more than once.
	Crossings []Crossing
}

// Crossover compares the base model's pass@k curve with another model's (Yue et al. 2025, arXiv
// 2504.13837: the k from which the base model's pass@k overtakes the RL model's for good).
//
// ks are the sampled ks in strictly increasing order (>= 1); base[i] and other[i] are the two
// curves' values at ks[i] (fractions). Values within CrossoverTol count as equal. A crossover
// is Found only when the base curve gets ahead and is not behind again up to the largest k;
// a base model ahead at small k and behind later has End = OtherAhead and no crossover. Between
// bracketing sampled ks k0 < k1 with differences d0 and d1 of opposite sign (or d1 = 0),
// K = 2^(log2 k0 + t*(log2 k1 - log2 k0)) with t = d0/(d0-d1). Errors (wrapping ErrInput) for
// mismatched or empty slices, non-increasing ks or k < 1.
func Crossover(ks []int, base, other []float64) (CrossoverResult, error) {
	if len(ks) == 0 || len(base) != len(ks) || len(other) != len(ks) {
		return CrossoverResult{}, fmt.Errorf("crossover: %w: %d ks, %d base and %d other values",
			ErrInput, len(ks), len(base), len(other))
	}
	for i, k := range ks {
		if k < 1 || (i > 0 && k <= ks[i-1]) {
			return CrossoverResult{}, fmt.Errorf("crossover: %w: ks must be increasing and >= 1 (ks[%d] = %d)", ErrInput, i, k)
		}
	}
	r := CrossoverResult{}
	r.Found, r.K, r.AtSampledK = crossover(ks, base, other)
	n := len(ks)
	// End and Since: walk back from the top while the leader is never behind.
	r.End = Even
	i := n - 1
	for ; i >= 0; i-- {
		l := leadOf(base[i] - other[i])
		if r.End == Even && l != Even {
			// Trailing ties: Since stays at the first k of the run of equal values.
			if i < n-1 {
				break
			}
			r.End = l
		}
		if l != Even && l != r.End {
			break
		}
	}
	r.Since = ks[i+1]
	// Crossings: each change between the leads, ties in between skipped.
	last, lastAt := Even, -1
	for i := range ks {
		l := leadOf(base[i] - other[i])
		if l == Even {
			continue
		}
		if last != Even && l != last {
			r.Crossings = append(r.Crossings, Crossing{
				K: crossAt(ks, base, other, lastAt), From: ks[lastAt], To: ks[lastAt+1], Lead: l,
			})
		}
		last, lastAt = l, i
	}
	return r, nil
}

// crossAt interpolates the zero of base − other on log2 k between ks[i] and ks[i+1], where the
// difference at i is non-zero and at i+1 is zero or of the opposite sign.
func crossAt(ks []int, base, other []float64, i int) float64 {
	d0, d1 := base[i]-other[i], base[i+1]-other[i+1]
	if leadOf(d1) == Even {
		return float64(ks[i+1])
	}
	t := d0 / (d0 - d1)
	lo, hi := math.Log2(float64(ks[i])), math.Log2(float64(ks[i+1]))
	return math.Exp2(lo + t*(hi-lo))
}

// crossover is the Found, K and AtSampledK of Crossover without the argument checks and
// without allocating (it runs once per bootstrap draw).
func crossover(ks []int, base, other []float64) (found bool, k float64, at int) {
	behind := -1 // last index where base is behind
	for i := range ks {
		if leadOf(base[i]-other[i]) == OtherAhead {
			behind = i
		}
	}
	for i := behind + 1; i < len(ks); i++ {
		if leadOf(base[i]-other[i]) == BaseAhead {
			at = ks[i]
			break
		}
	}
	if at == 0 {
		return false, 0, 0
	}
	if behind < 0 {
		return true, float64(ks[0]), at
	}
	return true, crossAt(ks, base, other, behind), at
}

// SamplingEfficiencyGap returns ΔSE = pass@k(base) − pass@1(rl) (Yue et al. 2025, arXiv
// 2504.13837, with their sign: positive when the base model sampled k times still beats the RL
// model's single attempt; smaller is better for RL). Both curves are indexed k-1 (as CurveAll
// returns them); k must be in 1..len(base), and rl must be non-empty.
func SamplingEfficiencyGap(base, rl []float64, k int) (float64, error) {
	if k < 1 || k > len(base) || len(rl) == 0 {
		return 0, fmt.Errorf("sampling-efficiency gap: %w: k = %d with %d base and %d rl values",
			ErrInput, k, len(base), len(rl))
	}
	return base[k-1] - rl[0], nil
}
