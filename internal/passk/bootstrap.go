package passk

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// DefaultDraws is the number of bootstrap draws when BootstrapOptions.Draws is 0.
const DefaultDraws = 2000

// pcgStream is the second PCG seed word of the first chunk of draws (chunk c uses pcgStream+c);
// fixed so that Seed alone decides the draws.
const pcgStream = 0x5851f42d4c957f2d

// drawChunk is how many bootstrap draws one task computes; the tasks run on every core.
const drawChunk = 100

// BootstrapOptions configures Bootstrap. The zero value means: 2,000 draws, seed 0, 95%
// intervals, every k from 1 to the smallest n, ΔSE at k = smallest n.
type BootstrapOptions struct {
	Draws int     // resamples; 0 means DefaultDraws
	Seed  uint64  // seeds math/rand/v2's PCG (with a fixed stream word): same seed, same result
	Level float64 // central interval mass in (0, 1); 0 means 0.95
	Ks    []int   // strictly increasing ks in 1..smallest n for the curves, differences and k*; nil means all
	GapK  int     // k of pass@k(base) in ΔSE; 0 means the smallest n (the largest k sampled)
	// Priors (one per model) let Ks, GapK and the PassN k go up to MaxK, past a problem's n:
	// there its row is PassAtKBeyond's posterior mean under its model's prior, the prior held
	// fixed across draws (so the intervals leave out the fit's own uncertainty; Beyond's
	// posterior intervals are the ones for this problem set). nil: every k within the smallest n.
	Priors []Prior
	MaxK   int // with Priors: the largest k, which takes the smallest n's place (NMin)
}

// Estimate is a point estimate (from the full data) with its bootstrap percentile interval.
type Estimate struct{ Point, Lo, Hi float64 }

// ModelBands holds one model's pass@k estimates.
type ModelBands struct {
	Curve []Estimate // pass@k at BootstrapResult.Ks, in [0, 1]
	Pass1 Estimate   // pass@1
	PassN Estimate   // pass@k at k = BootstrapResult.NMin
}

// CrossoverBound is one end of a crossover interval: Found = false means "no crossover up to
// the largest k" (K is then 0).
type CrossoverBound struct {
	Found bool
	K     float64
}

// CrossoverBand is the crossover k* with its bootstrap interval. Draws without a crossover count
// as k* = +∞ when taking percentiles, so Hi (or even Lo) can be "not found".
type CrossoverBand struct {
	Point      CrossoverResult // on the full data, over BootstrapResult.Ks
	Lo, Hi     CrossoverBound
	FoundShare float64 // fraction of draws in which a crossover was found
}

// PairBands compares model Other with the base model (index 0).
type PairBands struct {
	Other int        // index into the models passed to Bootstrap (>= 1)
	Diff  []Estimate // pass@k(other) − pass@k(base) at BootstrapResult.Ks, in [-1, 1]
	// BelowZeroFrom is the smallest k in Ks from which the base model is significantly ahead
	// through the largest k: every Diff interval from there on lies wholly below zero, or is
	// exactly zero in every draw (both curves at 100%, say). 0 if there is no such k. It follows
	// the definition of the crossover k* (ahead and staying ahead), with significance.
	BelowZeroFrom int
	// Significant lists the runs of consecutive Ks over which one model is significantly
	// ahead (the Diff interval excludes zero), in k order.
	Significant []SignificantRange
	Gap         Estimate // ΔSE = pass@GapK(base) − pass@1(other), Yue et al.'s sign
	Crossover   CrossoverBand
}

// BootstrapResult holds bootstrap intervals for a comparison. Models[m] belongs to the m-th
// input model; Pairs[i] compares model i+1 with the base model 0.
type BootstrapResult struct {
	Ks     []int
	NMin   int // smallest n over every model and problem: the k of PassN
	GapK   int
	Draws  int
	Level  float64
	Seed   uint64
	Models []ModelBands
	Pairs  []PairBands
}

// Bootstrap computes paired percentile-bootstrap intervals (Efron & Tibshirani 1993, ch. 13)
// over problems. models[0] is the base model; models[m][i] is model m's count on problem i, and
// every model must cover the same problems in the same order. Each draw resamples problem
// indices with replacement and applies the same indices to every model (paired), then takes the
// mean per-problem unbiased pass@k; intervals are the (1-Level)/2 and (1+Level)/2 quantiles of
// the draws (R's type-7 interpolation). The estimand is the expected pass@k over the population
// of problems the set was drawn from, so the intervals include between-problem variation.
//
// The per-problem pass@k rows are computed once per distinct (n, c), and a draw resamples
// problem types (a problem's counts under every model; see Resampler), so a draw costs
// O(min(problems, 4·types) + types · models + distinct counts · len(Ks) · models): a million
// problems with few distinct counts cost about what a few hundred do. Errors for no models,
// ragged or empty problem lists, invalid counts or options.
func Bootstrap(models [][]Count, opt BootstrapOptions) (BootstrapResult, error) {
	b, err := newBootstrapper(models, opt)
	if err != nil {
		return BootstrapResult{}, fmt.Errorf("bootstrap: %w", err)
	}
	return b.run(), nil
}

type bootstrapper struct {
	opt     BootstrapOptions
	nprob   int
	nmin    int
	cols    []int       // ks evaluated internally: Ks ∪ {1, NMin, GapK}, increasing
	ksCol   []int       // column of each Ks entry
	col1    int         // column of k = 1
	colN    int         // column of k = NMin
	colGap  int         // column of k = GapK
	classOf [][]int     // [model][problem] -> distinct-count class
	rows    [][]float64 // [model] flat [class*len(cols) + col] per-problem pass@k
	// A problem's type is its tuple of classes over the models; draws resample types.
	types     *Resampler
	typeClass [][]int // [type][model] -> class
}

func newBootstrapper(models [][]Count, opt BootstrapOptions) (*bootstrapper, error) {
	if len(models) == 0 {
		return nil, fmt.Errorf("%w: no models", ErrInput)
	}
	if opt.Draws == 0 {
		opt.Draws = DefaultDraws
	}
	if opt.Level == 0 {
		opt.Level = 0.95
	}
	if opt.Draws < 1 || !(opt.Level > 0 && opt.Level < 1) {
		return nil, fmt.Errorf("%w: draws = %d, level = %v", ErrInput, opt.Draws, opt.Level)
	}
	b := &bootstrapper{nprob: len(models[0]), nmin: math.MaxInt}
	for m, counts := range models {
		if len(counts) != b.nprob {
			return nil, fmt.Errorf("%w: model %d has %d problems, model 0 has %d", ErrInput, m, len(counts), b.nprob)
		}
		nmin, err := MinN(counts)
		if err != nil {
			return nil, fmt.Errorf("model %d: %w", m, err)
		}
		b.nmin = min(b.nmin, nmin)
	}
	if opt.Priors != nil {
		if len(opt.Priors) != len(models) || opt.MaxK < 1 {
			return nil, fmt.Errorf("%w: %d priors for %d models, max k %d", ErrInput, len(opt.Priors), len(models), opt.MaxK)
		}
		b.nmin = opt.MaxK
	}
	if opt.Ks == nil {
		opt.Ks = AllKs(b.nmin)
	}
	opt.Ks = slices.Clone(opt.Ks)
	if _, err := checkKs(opt.Ks, b.nmin); err != nil {
		return nil, err
	}
	if !slices.IsSorted(opt.Ks) || len(slices.Compact(slices.Clone(opt.Ks))) != len(opt.Ks) {
		return nil, fmt.Errorf("%w: ks must be strictly increasing", ErrInput)
	}
	if opt.GapK == 0 {
		opt.GapK = b.nmin
	}
	if opt.GapK < 1 || opt.GapK > b.nmin {
		return nil, fmt.Errorf("%w: gap k = %d, need 1..%d", ErrInput, opt.GapK, b.nmin)
	}
	b.opt = opt

	b.cols = slices.Concat(opt.Ks, []int{1, b.nmin, opt.GapK})
	slices.Sort(b.cols)
	b.cols = slices.Compact(b.cols)
	colOf := func(k int) int { i, _ := slices.BinarySearch(b.cols, k); return i }
	b.ksCol = make([]int, len(opt.Ks))
	for i, k := range opt.Ks {
		b.ksCol[i] = colOf(k)
	}
	b.col1, b.colN, b.colGap = colOf(1), colOf(b.nmin), colOf(opt.GapK)

	kmax := b.cols[len(b.cols)-1]
	full := make([]float64, kmax)
	for m, counts := range models {
		classes := map[Count]int{}
		classOf := make([]int, len(counts))
		var rows []float64
		for i, x := range counts {
			c, ok := classes[x]
			if !ok {
				c = len(classes)
				classes[x] = c
				if opt.Priors != nil {
					r, err := BeyondRows([]Count{x}, b.cols, opt.Priors[m])
					if err != nil {
						return nil, err
					}
					rows = append(rows, r[0]...)
					classOf[i] = c
					continue
				}
				problemCurve(x, full)
				for _, k := range b.cols {
					rows = append(rows, full[k-1])
				}
			}
			classOf[i] = c
		}
		b.classOf = append(b.classOf, classOf)
		b.rows = append(b.rows, rows)
	}
	typeOf := make([]int, b.nprob)
	ids := map[string]int{}
	key := make([]byte, 0, 8*len(models))
	for i := range b.nprob {
		key = key[:0]
		for m := range models {
			c := b.classOf[m][i]
			key = append(key, byte(c), byte(c>>8), byte(c>>16), byte(c>>24), byte(c>>32), byte(c>>40), byte(c>>48), byte(c>>56))
		}
		t, ok := ids[string(key)]
		if !ok {
			t = len(ids)
			ids[string(key)] = t
			tc := make([]int, len(models))
			for m := range models {
				tc[m] = b.classOf[m][i]
			}
			b.typeClass = append(b.typeClass, tc)
		}
		typeOf[i] = t
	}
	var err error
	if b.types, err = NewResampler(typeOf, len(ids)); err != nil {
		return nil, err
	}
	return b, nil
}

// curves writes each model's mean curve over cols for problem multiplicities given as per-class
// weights w[m][class] (summing to nprob) into out[m][col].
func (b *bootstrapper) curves(w [][]float64, out [][]float64) {
	nc := len(b.cols)
	for m, rows := range b.rows {
		acc := out[m]
		clear(acc)
		for c, wt := range w[m] {
			if wt == 0 {
				continue
			}
			row := rows[c*nc : (c+1)*nc]
			for j, v := range row {
				acc[j] += wt * v
			}
		}
		for j := range acc {
			acc[j] /= float64(b.nprob)
		}
	}
}

func (b *bootstrapper) run() BootstrapResult {
	nm, nc, nd, nks := len(b.rows), len(b.cols), b.opt.Draws, len(b.opt.Ks)
	w := make([][]float64, nm)
	cur := make([][]float64, nm)
	for m := range nm {
		w[m] = make([]float64, len(b.rows[m])/nc)
		cur[m] = make([]float64, nc)
	}
	baseKs, otherKs := make([]float64, nks), make([]float64, nks)
	pick := func(curve []float64, dst []float64) []float64 {
		for i, c := range b.ksCol {
			dst[i] = curve[c]
		}
		return dst
	}

	// Point estimates: every problem once.
	for m := range nm {
		clear(w[m])
		for _, c := range b.classOf[m] {
			w[m][c]++
		}
	}
	b.curves(w, cur)
	point := make([][]float64, nm)
	for m := range nm {
		point[m] = slices.Clone(cur[m])
	}

	// Draws, stored column-major so each quantity's draws are contiguous for sorting.
	vals := make([][]float64, nm)    // [model][col*nd + draw]
	diffs := make([][]float64, nm)   // [model][ksIdx*nd + draw], model >= 1
	gaps := make([][]float64, nm)    // [model][draw]
	crosses := make([][]float64, nm) // [model][draw], +Inf when not found
	for m := range nm {
		vals[m] = make([]float64, nc*nd)
		if m > 0 {
			diffs[m] = make([]float64, nks*nd)
			gaps[m] = make([]float64, nd)
			crosses[m] = make([]float64, nd)
		}
	}
	// Draws run in chunks of drawChunk on every core. Chunk c has its own
	// random stream, seeded from Seed and c alone, so the result does not
	// depend on the number of cores or on scheduling.
	chunks := (nd + drawChunk - 1) / drawChunk
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(chunks, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := make([][]float64, nm)
			cur := make([][]float64, nm)
			for m := range nm {
				w[m] = make([]float64, len(b.rows[m])/nc)
				cur[m] = make([]float64, nc)
			}
			baseKs, otherKs := make([]float64, nks), make([]float64, nks)
			wt := make([]float64, len(b.typeClass))
			for {
				c := int(next.Add(1)) - 1
				if c >= chunks {
					return
				}
				r := rand.New(rand.NewPCG(b.opt.Seed, pcgStream+uint64(c)))
				for d := c * drawChunk; d < min(nd, (c+1)*drawChunk); d++ {
					b.types.Draw(r, wt)
					for m := range nm {
						clear(w[m])
					}
					for t, x := range wt {
						if x == 0 {
							continue
						}
						for m, c := range b.typeClass[t] {
							w[m][c] += x
						}
					}
					b.curves(w, cur)
					for m := range nm {
						for j, v := range cur[m] {
							vals[m][j*nd+d] = v
						}
					}
					pick(cur[0], baseKs)
					for m := 1; m < nm; m++ {
						for i, c := range b.ksCol {
							diffs[m][i*nd+d] = cur[m][c] - cur[0][c]
						}
						gaps[m][d] = cur[0][b.colGap] - cur[m][b.col1]
						crosses[m][d] = math.Inf(1)
						if found, k, _ := crossover(b.opt.Ks, baseKs, pick(cur[m], otherKs)); found {
							crosses[m][d] = k
						}
					}
				}
			}
		}()
	}
	wg.Wait()

	lo, hi := (1-b.opt.Level)/2, (1+b.opt.Level)/2
	est := func(pt float64, draws []float64) Estimate {
		slices.Sort(draws)
		return Estimate{Point: pt, Lo: quantile(draws, lo), Hi: quantile(draws, hi)}
	}
	res := BootstrapResult{
		Ks: slices.Clone(b.opt.Ks), NMin: b.nmin, GapK: b.opt.GapK,
		Draws: nd, Level: b.opt.Level, Seed: b.opt.Seed,
	}
	for m := range nm {
		col := func(j int) []float64 { return vals[m][j*nd : (j+1)*nd] }
		mb := ModelBands{Curve: make([]Estimate, nks)}
		for i, c := range b.ksCol {
			mb.Curve[i] = est(point[m][c], col(c))
		}
		// est sorts a column in place; a column shared with Ks is just sorted again.
		mb.Pass1 = est(point[m][b.col1], col(b.col1))
		mb.PassN = est(point[m][b.colN], col(b.colN))
		res.Models = append(res.Models, mb)
	}
	pick(point[0], baseKs)
	for m := 1; m < nm; m++ {
		pb := PairBands{Other: m, Diff: make([]Estimate, nks)}
		for i, c := range b.ksCol {
			pb.Diff[i] = est(point[m][c]-point[0][c], diffs[m][i*nd:(i+1)*nd])
		}
		pb.Significant = significantRanges(b.opt.Ks, pb.Diff)
		pb.BelowZeroFrom = baseAheadFrom(pb.Significant)
		pb.Gap = est(point[0][b.colGap]-point[m][b.col1], gaps[m])
		found := 0
		for _, k := range crosses[m] {
			if !math.IsInf(k, 1) {
				found++
			}
		}
		slices.Sort(crosses[m])
		pt, _ := Crossover(b.opt.Ks, baseKs, pick(point[m], otherKs)) // arguments checked in newBootstrapper
		pb.Crossover = CrossoverBand{
			Point:      pt,
			Lo:         bound(quantile(crosses[m], lo)),
			Hi:         bound(quantile(crosses[m], hi)),
			FoundShare: float64(found) / float64(nd),
		}
		res.Pairs = append(res.Pairs, pb)
	}
	return res
}

// SignificantRange is a run of consecutive sampled ks over which one model is significantly
// ahead of the other: the paired interval of the difference excludes zero at every k of it.
type SignificantRange struct {
	Lead     Lead // BaseAhead or OtherAhead
	From, To int  // first and last k of the run (inclusive)
	// Through is true when the lead holds to the largest k: the run ends there, or every later
	// interval is exactly zero (the curves are equal in every draw, e.g. both at 100%).
	Through bool
}

// significantRanges finds the runs of ks whose difference interval (other − base) lies wholly
// above zero (OtherAhead) or wholly below (BaseAhead).
func significantRanges(ks []int, diff []Estimate) []SignificantRange {
	leadAt := func(e Estimate) Lead {
		switch {
		case e.Hi < -CrossoverTol:
			return BaseAhead
		case e.Lo > CrossoverTol:
			return OtherAhead
		}
		return Even
	}
	exactZero := func(e Estimate) bool {
		return math.Abs(e.Lo) <= CrossoverTol && math.Abs(e.Hi) <= CrossoverTol && math.Abs(e.Point) <= CrossoverTol
	}
	var out []SignificantRange
	for i := 0; i < len(ks); {
		l := leadAt(diff[i])
		if l == Even {
			i++
			continue
		}
		j := i
		for j+1 < len(ks) && leadAt(diff[j+1]) == l {
			j++
		}
		r := SignificantRange{Lead: l, From: ks[i], To: ks[j], Through: true}
		for _, e := range diff[j+1:] {
			if !exactZero(e) {
				r.Through = false
				break
			}
		}
		out = append(out, r)
		i = j + 1
	}
	return out
}

// baseAheadFrom is the first k of the base model's significant lead when it holds through the
// largest k (the last run is the base's and Through), else 0.
func baseAheadFrom(rs []SignificantRange) int {
	if n := len(rs); n > 0 && rs[n-1].Lead == BaseAhead && rs[n-1].Through {
		return rs[n-1].From
	}
	return 0
}

func bound(k float64) CrossoverBound {
	if math.IsInf(k, 1) {
		return CrossoverBound{}
	}
	return CrossoverBound{Found: true, K: k}
}

// quantile is R's type-7 sample quantile of sorted (ascending, non-empty), q in [0, 1]; +Inf
// entries are allowed and propagate.
func quantile(sorted []float64, q float64) float64 {
	h := q * float64(len(sorted)-1)
	i := int(math.Floor(h))
	f := h - float64(i)
	if f == 0 || i+1 >= len(sorted) {
		return sorted[i]
	}
	a, b := sorted[i], sorted[i+1]
	if math.IsInf(b, 1) {
		return b
	}
	return a + f*(b-a)
}
