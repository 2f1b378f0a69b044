// Package tempsweep computes the figures of a temperature sweep: one model sampled at several
// temperatures in one comparison. Per temperature it gives the pass@k curve and the solved set;
// per model the union across temperatures ("best of temperatures" coverage, arXiv 2510.02611,
// which reports that a union over temperatures adds 7.3 points of pass@k and lets base models
// match RL models); and the base-vs-RL crossover k* (Yue et al. 2025, arXiv 2504.13837) at each
// temperature, with its paired bootstrap interval over problems.
//
// Which runs are "one model at several temperatures" is decided by the caller through
// Run.Identity (see Groups); everything here is pure.
package tempsweep

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/reach-lab/reach/internal/passk"
)

// Run is one model of a comparison as the sweep sees it. Counts are the run's counts on the
// comparison's problems, in the same order for every run.
type Run struct {
	Name string
	Role string // base | rl | checkpoint | distilled
	// Identity names the model the run sampled (e.g. an endpoint's URL and served model name);
	// runs with the same Role and Identity and different temperatures are one model's sweep.
	Identity    string
	Temperature float64
	HasTemp     bool // Temperature was recorded
	Counts      []passk.Count
}

// Point is a value at one k.
type Point struct {
	K     int     `json:"k"`
	Value float64 `json:"value"`
}

// Temp is one temperature of a swept model.
type Temp struct {
	Temperature float64 `json:"temperature"`
	Run         string  `json:"run"`
	RunIndex    int     `json:"run_index"`
	PassAtK     []Point `json:"pass_at_k"` // at Sweep.Ks
	Solved      int     `json:"solved"`    // problems with c ≥ 1 at this temperature
	// OnlyHere are the problems (keys) solved at this temperature and at no other of the model's.
	OnlyHere []string `json:"solved_only_here"`
}

// UnionPoint is the union across temperatures at one k.
type UnionPoint struct {
	K int `json:"k"`
	// Union is the mean over problems of 1 − Π_T C(n_T−c_T, k)/C(n_T, k): the chance that k
	// samples at every temperature (k·|T| in all) hold a correct one, unbiased because the
	// temperatures' samples are independent.
	Union float64 `json:"union"`
	// Best is the largest single temperature's pass@k at the same k, BestTemperature its
	// temperature (the lowest on a tie).
	Best            float64 `json:"best_single"`
	BestTemperature float64 `json:"best_single_temperature"`
	// Matched is the best single temperature's pass@(k·|T|), the same number of samples as the
	// union spends, when k·|T| is within every temperature's n (else absent).
	Matched  *float64 `json:"best_single_matched,omitempty"`
	MatchedK int      `json:"matched_k,omitempty"`
}

// Union is the "best of temperatures" figures of one model.
type Union struct {
	// Solved counts problems solved by at least one sample at any temperature (every sample
	// each temperature has: exact, no estimator), Coverage is Solved / problems.
	Solved   int     `json:"solved"`
	Coverage float64 `json:"coverage"`
	// BestSolved is the most problems one temperature solves (at BestTemperature, lowest on a
	// tie), Gain = Coverage − BestSolved / problems: what the union adds.
	BestSolved      int          `json:"best_single_solved"`
	BestTemperature float64      `json:"best_single_temperature"`
	Gain            float64      `json:"gain"`
	AtK             []UnionPoint `json:"at_k"`
}

// Model is one swept model: its temperatures in increasing order and their union.
type Model struct {
	Model        string `json:"model"` // the runs' shared name (Stem of the first run's)
	Role         string `json:"role"`
	Temperatures []Temp `json:"temperatures"`
	Union        Union  `json:"union"`
}

// Crossover is base vs another model at one temperature: k* with its bootstrap interval.
type Crossover struct {
	Base             string  `json:"base"`
	Other            string  `json:"other"`
	BaseTemperature  float64 `json:"base_temperature"`
	OtherTemperature float64 `json:"other_temperature"`
	// Temperature is the swept one: the other model's (or the base model's when only it is
	// swept); the chart's x.
	Temperature float64 `json:"temperature"`
	BaseSwept   bool    `json:"base_swept,omitempty"` // the x is the base model's temperature
	Found       bool    `json:"found"`
	K           float64 `json:"k_star,omitempty"`
	Lo          Bound   `json:"lo"`
	Hi          Bound   `json:"hi"`
	FoundShare  float64 `json:"found_share"`
	KMax        int     `json:"k_max"` // the largest k looked at: the pair's smallest n
}

// Bound is one end of k*'s interval: Found false means no crossover up to the largest k.
type Bound struct {
	Found bool    `json:"found"`
	K     float64 `json:"k,omitempty"`
}

// Sweep is every figure of a comparison's temperature sweeps.
type Sweep struct {
	Ks         []int       `json:"ks"` // the ks of the curves and the union
	Problems   int         `json:"problems"`
	Models     []Model     `json:"models"`
	Crossovers []Crossover `json:"crossovers"`
	Draws      int         `json:"draws"`
	Seed       uint64      `json:"seed"`
}

// Stem is a run name without a trailing "@T=…" (the names Reach gives the runs of a sampled
// sweep: "rl@T=1.0" → "rl").
func Stem(name string) string {
	if i, _, ok := nameTemp(name); ok {
		return name[:i]
	}
	return name
}

// NameTemperature is the temperature a run's name gives after a trailing "@T=" ("rl@T=1.0" →
// 1); false when the name has none (or it is not a number ≥ 0).
func NameTemperature(name string) (float64, bool) {
	_, t, ok := nameTemp(name)
	return t, ok
}

func nameTemp(name string) (int, float64, bool) {
	i := strings.LastIndex(name, "@T=")
	if i <= 0 {
		return 0, 0, false
	}
	t, err := strconv.ParseFloat(name[i+3:], 64)
	if err != nil || !(t >= 0) || math.IsInf(t, 0) {
		return 0, 0, false
	}
	return i, t, true
}

// Groups returns the sweeps among runs: indices of runs with the same Role and Identity and a
// recorded temperature, when they hold at least two different temperatures; each group is in
// increasing temperature, and of several runs at one temperature the first is kept. Groups are
// in the order of their first run.
func Groups(runs []Run) [][]int {
	type key struct{ role, id string }
	var order []key
	by := map[key][]int{}
	for i, r := range runs {
		if !r.HasTemp || r.Identity == "" {
			continue
		}
		k := key{r.Role, r.Identity}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		dup := false
		for _, j := range by[k] {
			dup = dup || runs[j].Temperature == r.Temperature
		}
		if !dup {
			by[k] = append(by[k], i)
		}
	}
	var out [][]int
	for _, k := range order {
		g := by[k]
		if len(g) < 2 {
			continue
		}
		slices.SortStableFunc(g, func(a, b int) int { return cmp.Compare(runs[a].Temperature, runs[b].Temperature) })
		out = append(out, g)
	}
	return out
}

// Options configures Compute.
type Options struct {
	Ks []int // ks of the curves and the union (each ≤ every swept run's smallest n); nil: powers of two and the smallest n
	// ChartKs gives the ks a crossover is looked for at, up to the pair's smallest n (the
	// comparison page's; nil: every k).
	ChartKs func(kmax int) []int
	Draws   int    // bootstrap draws of k*; 0 means 1,000
	Seed    uint64 // bootstrap seed
}

// Compute returns the sweep figures, or nil when no model is swept. keys[j] names problem j.
// The comparison's base model is runs[0]. Crossovers: every swept non-base model at each of
// its temperatures against the base-role run at the same temperature when there is one, else
// against runs[0]; when only base-role models are swept, each base temperature against every
// non-base run.
func Compute(runs []Run, keys []string, opt Options) (*Sweep, error) {
	groups := Groups(runs)
	if len(groups) == 0 {
		return nil, nil
	}
	if opt.Draws == 0 {
		opt.Draws = 1000
	}
	for i, r := range runs {
		if len(r.Counts) != len(keys) {
			return nil, fmt.Errorf("temperature sweep: run %d has %d problems, want %d", i, len(r.Counts), len(keys))
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("temperature sweep: no problems")
	}
	nmin := math.MaxInt
	for _, g := range groups {
		for _, i := range g {
			n, err := passk.MinN(runs[i].Counts)
			if err != nil {
				return nil, fmt.Errorf("temperature sweep: %q: %w", runs[i].Name, err)
			}
			nmin = min(nmin, n)
		}
	}
	ks := opt.Ks
	if ks == nil {
		for k := 1; k < nmin; k *= 2 {
			ks = append(ks, k)
		}
		ks = append(ks, nmin)
	}
	sw := &Sweep{Ks: ks, Problems: len(keys), Draws: opt.Draws, Seed: opt.Seed, Models: []Model{}, Crossovers: []Crossover{}}
	for _, g := range groups {
		m, err := model(runs, g, keys, ks)
		if err != nil {
			return nil, err
		}
		sw.Models = append(sw.Models, m)
	}
	for _, p := range pairs(runs, groups) {
		c, err := crossover(runs, p, opt)
		if err != nil {
			return nil, err
		}
		sw.Crossovers = append(sw.Crossovers, c)
	}
	return sw, nil
}

// model computes one swept model's per-temperature figures and union.
func model(runs []Run, g []int, keys []string, ks []int) (Model, error) {
	first := runs[g[0]]
	m := Model{Model: Stem(first.Name), Role: first.Role}
	np := len(keys)
	// miss[j][i] = Π_T C(n_T−c_T, ks[i]) / C(n_T, ks[i]) over the temperatures so far.
	miss := make([][]float64, np)
	for j := range miss {
		miss[j] = make([]float64, len(ks))
		for i := range ks {
			miss[j][i] = 1
		}
	}
	curves := make([][]float64, len(g))
	nmin := math.MaxInt
	for t, ri := range g {
		r := runs[ri]
		n, _ := passk.MinN(r.Counts)
		nmin = min(nmin, n)
		rows, err := passk.PerProblemMatrix(r.Counts, ks)
		if err != nil {
			return Model{}, fmt.Errorf("temperature sweep: %q: %w", r.Name, err)
		}
		curves[t] = make([]float64, len(ks))
		for j, row := range rows {
			for i, v := range row {
				curves[t][i] += v
				miss[j][i] *= 1 - v
			}
		}
		tp := Temp{Temperature: r.Temperature, Run: r.Name, RunIndex: ri, OnlyHere: []string{}}
		for i, k := range ks {
			curves[t][i] /= float64(np)
			tp.PassAtK = append(tp.PassAtK, Point{K: k, Value: curves[t][i]})
		}
		for j, x := range r.Counts {
			if x.C == 0 {
				continue
			}
			tp.Solved++
			only := true
			for _, o := range g {
				only = only && (o == ri || runs[o].Counts[j].C == 0)
			}
			if only {
				tp.OnlyHere = append(tp.OnlyHere, keys[j])
			}
		}
		m.Temperatures = append(m.Temperatures, tp)
	}
	u := &m.Union
	for j := range keys {
		for _, ri := range g {
			if runs[ri].Counts[j].C > 0 {
				u.Solved++
				break
			}
		}
	}
	u.Coverage = float64(u.Solved) / float64(np)
	u.BestSolved = -1
	for _, tp := range m.Temperatures {
		if tp.Solved > u.BestSolved {
			u.BestSolved, u.BestTemperature = tp.Solved, tp.Temperature
		}
	}
	u.Gain = u.Coverage - float64(u.BestSolved)/float64(np)
	for i, k := range ks {
		p := UnionPoint{K: k, Best: -1}
		for j := range keys {
			p.Union += 1 - miss[j][i]
		}
		p.Union /= float64(np)
		for t, c := range curves {
			if c[i] > p.Best {
				p.Best, p.BestTemperature = c[i], m.Temperatures[t].Temperature
			}
		}
		if mk := k * len(g); mk <= nmin {
			best := -1.0
			for _, ri := range g {
				c, err := passk.Curve(runs[ri].Counts, []int{mk})
				if err != nil {
					return Model{}, fmt.Errorf("temperature sweep: %q: %w", runs[ri].Name, err)
				}
				best = max(best, c[0])
			}
			p.Matched, p.MatchedK = &best, mk
		}
		u.AtK = append(u.AtK, p)
	}
	return m, nil
}

type pair struct {
	base, other int
	swept       float64
	baseSwept   bool
}

// pairs lists the crossovers to compute (see Compute).
func pairs(runs []Run, groups [][]int) []pair {
	swept := map[int]bool{}
	otherSwept := false
	for _, g := range groups {
		for _, i := range g {
			swept[i] = true
			otherSwept = otherSwept || runs[i].Role != "base"
		}
	}
	var out []pair
	if otherSwept {
		for _, g := range groups {
			if runs[g[0]].Role == "base" {
				continue
			}
			for _, o := range g {
				b := 0
				for i, r := range runs {
					if r.Role == "base" && r.HasTemp && r.Temperature == runs[o].Temperature {
						b = i
						break
					}
				}
				if b != o {
					out = append(out, pair{b, o, runs[o].Temperature, false})
				}
			}
		}
		return out
	}
	for _, g := range groups {
		for _, b := range g {
			for o, r := range runs {
				if r.Role != "base" {
					out = append(out, pair{b, o, runs[b].Temperature, true})
				}
			}
		}
	}
	return out
}

// crossover is k* of one pair on the ks opt.ChartKs gives up to the pair's smallest n, with the
// paired percentile bootstrap's 95% interval (passk.Bootstrap).
func crossover(runs []Run, p pair, opt Options) (Crossover, error) {
	b, o := runs[p.base], runs[p.other]
	c := Crossover{Base: b.Name, Other: o.Name, BaseTemperature: b.Temperature, OtherTemperature: o.Temperature, Temperature: p.swept, BaseSwept: p.baseSwept}
	nb, _ := passk.MinN(b.Counts)
	no, err := passk.MinN(o.Counts)
	if err != nil {
		return c, fmt.Errorf("temperature sweep: %q: %w", o.Name, err)
	}
	c.KMax = min(nb, no)
	var ks []int
	if opt.ChartKs != nil {
		ks = opt.ChartKs(c.KMax)
	}
	res, err := passk.Bootstrap([][]passk.Count{b.Counts, o.Counts}, passk.BootstrapOptions{Draws: opt.Draws, Seed: opt.Seed, Ks: ks})
	if err != nil {
		return c, fmt.Errorf("temperature sweep: k* of %q vs %q: %w", b.Name, o.Name, err)
	}
	band := res.Pairs[0].Crossover
	c.Found, c.K = band.Point.Found, band.Point.K
	c.Lo, c.Hi = Bound{band.Lo.Found, band.Lo.K}, Bound{band.Hi.Found, band.Hi.K}
	c.FoundShare = band.FoundShare
	return c, nil
}
