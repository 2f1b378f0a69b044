package passk

import (
	"fmt"
	"math"
)

// CrossoverTol is the absolute tolerance under which two curve values count as equal: it absorbs
// float64 rounding in means of mathematically equal curves (e.g. both at exactly 100%).
const CrossoverTol = 1e-12

// CrossoverResult is where the base model's pass@k curve reaches another model's curve.
type CrossoverResult struct {
	// Found is false when base stays below the other curve at every sampled k
	// ("no crossover up to k = n"); K and AtSampledK are then 0.
	Found bool
	// K is the crossover point k*, interpolated linearly on log2 k between the last sampled k
	// where base was below and the first where it reached the other curve. K = ks[0] (1 for a
	// full curve) when base already reaches the other curve at the first k.
	K float64
	// AtSampledK is the first sampled k at which base >= other (within CrossoverTol).
	AtSampledK int
	// Tie is true when, at AtSampledK, the curves are equal within CrossoverTol rather than base
	// being strictly above: the curves touch there (K is then AtSampledK exactly).
	Tie bool
}

// Crossover returns the smallest k at which the base curve reaches the other curve (Yue et al.
// 2025, arXiv 2504.13837: the k where the base model's pass@k catches up with the RL model's).
//
// ks are the sampled ks in strictly increasing order (>= 1); base[i] and other[i] are the two
// curves' values at ks[i]. "Reaches" means base >= other - CrossoverTol, so equal or touching
// curves count as reached at the first k where they meet, even if base falls below again later:
// the result is the first meeting point, and Tie reports that it was a touch, not a crossing.
// Identical curves give K = ks[0]. Between the bracketing sampled ks k0 < k1 with differences
// d0 = base-other < 0 and d1 >= 0, K = 2^(log2 k0 + t*(log2 k1 - log2 k0)) with t = -d0/(d1-d0).
// Errors for mismatched or empty slices, non-increasing ks or k < 1.
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
	return crossover(ks, base, other), nil
}

// crossover is Crossover without the argument checks (used per bootstrap draw).
func crossover(ks []int, base, other []float64) CrossoverResult {
	prev := 0.0
	for i, k := range ks {
		d := base[i] - other[i]
		if d < -CrossoverTol {
			prev = d
			continue
		}
		r := CrossoverResult{Found: true, K: float64(k), AtSampledK: k, Tie: d <= CrossoverTol}
		if i == 0 || r.Tie {
			return r
		}
		t := -prev / (d - prev)
		lo, hi := math.Log2(float64(ks[i-1])), math.Log2(float64(k))
		r.K = math.Exp2(lo + t*(hi-lo))
		return r
	}
	return CrossoverResult{}
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
