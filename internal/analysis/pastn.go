package analysis

import (
	"math"
	"slices"

	"github.com/reach-lab/reach/internal/passk"
)

// PastNFactor is how far past the sampled n the curves are continued: to 4n.
const PastNFactor = 4

// PastN continues a model's pass@k curve past the largest k every problem was sampled at:
// "what would pass@k be with more samples?" Every value here is extrapolated, under two priors
// of success rates fitted to the model's counts (passk.PassAtKBeyond): the zero-one-inflated
// Beta-Binomial (Prior; never-solved problems may be unsolvable) and the plain Beta-Binomial
// (PlainPrior; they are merely rare). Counts up to n cannot tell the two apart, and 4n past
// them the answers differ by points (MATH500's base model thinned to n = 32: pass@128 94.1%
// and 97.7%, truth 96.2%), so a point's value is their midpoint and its interval the union of
// their 95% posterior intervals.
type PastN struct {
	// Points are pass@k at 2n and 4n (n = the report's k sampled), each extrapolated.
	Points     []PastNPoint `json:"points"`
	Prior      PriorFit     `json:"prior"`
	PlainPrior PriorFit     `json:"plain_prior"`
}

// PastNPoint is one extrapolated pass@k with its 95% posterior interval for this problem set.
type PastNPoint struct {
	K     int     `json:"k"`
	Value float64 `json:"value"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
	// Gain is Value minus pass@n: what the extra samples would add, in [0, 1].
	Gain float64 `json:"gain"`
}

// PastNCrossover is the crossover of a pair's curves continued to 4n: where the base model would
// overtake if both were sampled further, under the fitted priors.
type PastNCrossover struct {
	KMax  int       `json:"k_max"`
	Cross Crossover `json:"crossover"`
}

// pastNKs are the ks past n the continuation is evaluated at: 8 per doubling and 2n, 4n.
func pastNKs(n int) []int {
	var ks []int
	for j := 1; j <= 8*2; j++ {
		k := int(math.Round(float64(n) * math.Exp2(float64(j)/8)))
		if k > n && (len(ks) == 0 || k > ks[len(ks)-1]) {
			ks = append(ks, k)
		}
	}
	for _, k := range []int{2 * n, PastNFactor * n} {
		if !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

// pastNFigures continues each model's curve past the sampled k (not for adaptive designs,
// whose curves already go to their target n, nor for n < 2) and each pair's crossover with it.
func (rep *Report) pastNFigures(models [][]passk.Count) error {
	n := rep.KSampled
	if n < 2 || rep.KMax != n || len(models) == 0 {
		return nil
	}
	ks := pastNKs(n)
	curves := make([][]float64, len(models))
	for m, cs := range models {
		inflated, err := passk.FitPrior(cs)
		if err != nil {
			return err
		}
		plain, err := passk.FitBetaPrior(cs)
		if err != nil {
			return err
		}
		a, err := passk.Beyond(cs, ks, inflated)
		if err != nil {
			return err
		}
		b, err := passk.Beyond(cs, ks, plain)
		if err != nil {
			return err
		}
		// The sampled pass@n plus what each prior adds past it: a curve that never falls
		// below pass@n (passk.GainBeyond), with each prior's posterior half-width around it.
		ga, err := passk.GainBeyond(cs, n, ks, inflated)
		if err != nil {
			return err
		}
		gb, err := passk.GainBeyond(cs, n, ks, plain)
		if err != nil {
			return err
		}
		pn := rep.Models[m].PassAtK[n-1].Value
		p := &PastN{Prior: priorFit(inflated), PlainPrior: priorFit(plain)}
		curves[m] = make([]float64, len(ks))
		for j, k := range ks {
			va, vb := min(1, pn+ga[j]), min(1, pn+gb[j])
			ha, hb := (a.Hi[j]-a.Lo[j])/2, (b.Hi[j]-b.Lo[j])/2
			v := (va + vb) / 2
			curves[m][j] = v
			if k == 2*n || k == PastNFactor*n {
				p.Points = append(p.Points, PastNPoint{K: k, Value: v, Lo: max(0, min(va-ha, vb-hb)), Hi: min(1, max(va+ha, vb+hb)), Gain: v - pn})
			}
		}
		rep.Models[m].PastN = p
	}
	// The pair's curves at the sampled ks and the continuation, on one axis.
	all := slices.Concat(GroupKs(n), ks)
	for i := range rep.Pairs {
		bv, ov := make([]float64, 0, len(all)), make([]float64, 0, len(all))
		for _, k := range GroupKs(n) {
			bv, ov = append(bv, rep.Models[0].PassAtK[k-1].Value), append(ov, rep.Models[i+1].PassAtK[k-1].Value)
		}
		bv, ov = append(bv, curves[0]...), append(ov, curves[i+1]...)
		cr, err := crossoverOf(all, bv, ov, PastNFactor*n, RoleNoun(rep.Models[i+1].Role))
		if err != nil {
			return err
		}
		rep.Pairs[i].PastN = &PastNCrossover{KMax: PastNFactor * n, Cross: cr}
	}
	return nil
}

func priorFit(prior passk.Prior) PriorFit {
	return PriorFit{Zero: prior.Zero, One: prior.One, Alpha: prior.Alpha, Beta: prior.Beta,
		Chi2: prior.Fit.Chi2, Chi2DF: prior.Fit.DF, Chi2P: prior.Fit.P, Departure: prior.Fit.Departure,
		CheckKs: prior.Fit.CheckKs, Degenerate: prior.Fit.Degenerate, Poor: prior.Fit.Poor()}
}
