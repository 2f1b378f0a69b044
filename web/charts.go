package web

import (
	"fmt"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/charts"
	"github.com/reach-lab/reach/internal/tempsweep"
	"github.com/reach-lab/reach/web/views"
)

func chart(s charts.Snippet) views.Chart { return views.Chart{ID: s.ID, HTML: string(s.HTML)} }

// pointsSeries turns report points (and optional bands) into a chart series.
func pointsSeries(name string, ps []analysis.Point, bands []analysis.Band) charts.CurveSeries {
	s := charts.CurveSeries{Name: name}
	for i, p := range ps {
		s.Ks = append(s.Ks, p.K)
		s.Values = append(s.Values, p.Value)
		if len(bands) == len(ps) {
			s.Lo, s.Hi = append(s.Lo, bands[i].Lo), append(s.Hi, bands[i].Hi)
		}
	}
	return s
}

// curveSeries is a full pass@k curve (points at k = 1, 2, …) at the ks the
// chart draws (analysis.ChartKs): the page stays small and fast whatever n
// is. The bands are drawn when they cover every one of those ks.
func curveSeries(name string, ps []analysis.Point, bands []analysis.Band) charts.CurveSeries {
	s := charts.CurveSeries{Name: name}
	band := make(map[int]analysis.Band, len(bands))
	for _, b := range bands {
		band[b.K] = b
	}
	for _, k := range analysis.ChartKs(len(ps)) {
		p := ps[k-1]
		s.Ks, s.Values = append(s.Ks, p.K), append(s.Values, p.Value)
		if b, ok := band[k]; ok {
			s.Lo, s.Hi = append(s.Lo, b.Lo), append(s.Hi, b.Hi)
		}
	}
	if len(s.Lo) != len(s.Ks) {
		s.Lo, s.Hi = nil, nil
	}
	return s
}

// chartSet is what reportCharts builds.
type chartSet struct {
	crossover, histogram views.Chart
	venns                []views.Chart
	vennPairs            []int
	stats                views.StatsCharts
}

// memoCharts is reportCharts, built once per report (Entry) and arguments.
func memoCharts(e *analysis.Entry, id int64, opt analysis.Options, pair int, links bool) (chartSet, error) {
	v, err := e.Memo(fmt.Sprintf("charts|%d|%d|%t", id, pair, links), func() (any, error) {
		var cs chartSet
		var err error
		cs.crossover, cs.venns, cs.vennPairs, cs.histogram, cs.stats, err = reportCharts(id, e.Report, opt, pair, links)
		return cs, err
	})
	if err != nil {
		return chartSet{}, err
	}
	return v.(chartSet), nil
}

// sharedVenns is how many pairs' Venns a shared page draws at most.
const sharedVenns = 16

// reportCharts builds the comparison page's charts from its report: the
// crossover (with 95% bands once the statistics job has run, or the biased
// estimator's curves when asked for), the Venns, the histogram and the
// statistics section's charts. With more than three models the UpSet chart
// shows all solved sets and only the Venn of pair (1-based, the pair the
// problem table refers to) is drawn; vennPairs says which pair each Venn is.
// With links the Venn regions link to the problem table (not on share links,
// whose readers cannot open it).
func reportCharts(id int64, rep *analysis.Report, opt analysis.Options, pair int, links bool) (views.Chart, []views.Chart, []int, views.Chart, views.StatsCharts, error) {
	var sc views.StatsCharts
	fail := func(what string, err error) (views.Chart, []views.Chart, []int, views.Chart, views.StatsCharts, error) {
		return views.Chart{}, nil, nil, views.Chart{}, sc, fmt.Errorf("%s chart: %w", what, err)
	}
	prefix := fmt.Sprintf("c%d", id)
	in := charts.CrossoverInput{Title: "pass@k"}
	cr := rep.Pairs[0].Crossover
	for _, m := range rep.Models {
		switch {
		case opt.Biased && m.PassAtKBiased != nil:
			in.Series = append(in.Series, curveSeries(m.Name, m.PassAtKBiased, nil))
		default:
			s := curveSeries(m.Name, m.PassAtK, m.PassAtKCI)
			if m.Beyond != nil {
				s.DashedFrom = m.Beyond.FromK - 1 // extrapolated past the model's smallest n
			}
			in.Series = append(in.Series, s)
		}
	}
	if opt.Biased && rep.Pairs[0].CrossoverBiased != nil {
		in.Title, cr = "pass@k, biased estimator 1 − (1 − c/n)^k", *rep.Pairs[0].CrossoverBiased
	}
	switch {
	case len(rep.Pairs) > 1:
		// One k* line per pair, named by its model: a single line would say
		// nothing of which pair it is.
		for i, p := range rep.Pairs {
			pc := p.Crossover
			if opt.Biased && p.CrossoverBiased != nil {
				pc = *p.CrossoverBiased
			}
			if pc.Found && pc.K > 1 {
				in.Crossovers = append(in.Crossovers, charts.CrossoverLine{K: pc.K, Label: fmt.Sprintf("k* ≈ %.1f %s", pc.K, p.Other), Series: i + 1})
			}
		}
	case cr.Found && cr.K > 1:
		in.CrossoverK, in.CrossoverLabel = cr.K, cr.Label
	}
	cross, err := charts.Crossover(prefix, in)
	if err != nil {
		return fail("crossover", err)
	}

	var venns []views.Chart
	var vennPairs []int
	for i, p := range rep.Pairs {
		// The comparison page draws the pair it shows (past three models);
		// a shared page, which has no pair to choose, draws every pair's
		// (up to sharedVenns).
		if links && len(rep.Models) > 3 && i+1 != pair {
			continue
		}
		if !links && i >= sharedVenns {
			break
		}
		vin := charts.VennInput{
			A: p.Base, B: p.Other, Both: p.Solved.Both, AOnly: p.Solved.BaseOnly, BOnly: p.Solved.OtherOnly,
			Neither: p.Solved.Neither, Total: rep.Problems, BColor: i + 2, // pair i is model i+1
		}
		if links {
			vin.RegionURL = fmt.Sprintf("/comparisons/%d?pair=%d&region={region}%s#problems", id, i+1, variantQuery(opt))
		}
		v, err := charts.Venn(fmt.Sprintf("%s_%d", prefix, i+1), vin)
		if err != nil {
			return fail("Venn", err)
		}
		venns, vennPairs = append(venns, chart(v)), append(vennPairs, i)
	}

	hin := charts.HistogramInput{Title: "problems by c/n"}
	for _, b := range rep.Models[0].Histogram {
		hin.Labels = append(hin.Labels, b.Label)
	}
	for _, m := range rep.Models {
		hs := charts.HistSeries{Name: m.Name}
		for _, b := range m.Histogram {
			hs.Counts = append(hs.Counts, b.Count)
		}
		hin.Series = append(hin.Series, hs)
	}
	hist, err := charts.Histogram(prefix, hin)
	if err != nil {
		return fail("histogram", err)
	}
	if sc, err = statsCharts(prefix, rep); err != nil {
		return fail("statistics", err)
	}
	return chart(cross), venns, vennPairs, chart(hist), sc, nil
}

// variantQuery keeps the report variant in links ("&exclude=guessable").
func variantQuery(opt analysis.Options) string {
	q := ""
	if opt.ExcludeGuessable {
		q += "&exclude=guessable"
	}
	if opt.Biased {
		q += "&estimator=biased"
	}
	if opt.ExcludeProblems != nil {
		q += "&without=grading-errors"
	}
	if opt.MinN > 0 {
		q += fmt.Sprintf("&min_n=%d", opt.MinN)
	}
	return q
}

// statsCharts builds the difference curve, Cover@τ, maj@k, trajectory,
// UpSet, cost and breakdown charts.
func statsCharts(prefix string, rep *analysis.Report) (views.StatsCharts, error) {
	var sc views.StatsCharts
	din := charts.DiffInput{Title: "pass@k(model) − pass@k(base)"}
	for _, p := range rep.Pairs {
		// Each difference curve in the colour of its model (pair i is model i+1).
		s := charts.CurveSeries{Name: p.Other + " − " + p.Base, Color: modelIndex(rep, p.Other) + 1}
		for _, k := range analysis.ChartKs(len(p.Diff)) {
			d := p.Diff[k-1]
			s.Ks, s.Values = append(s.Ks, d.K), append(s.Values, d.Value)
			if d.CI != nil {
				s.Lo, s.Hi = append(s.Lo, d.CI.Lo), append(s.Hi, d.CI.Hi)
			}
		}
		if len(s.Lo) != len(s.Ks) {
			s.Lo, s.Hi = nil, nil
		}
		s.DashedFrom = extrapolatedFrom(rep, p.Base, p.Other) - 1
		din.Series = append(din.Series, s)
	}
	diff, err := charts.DiffCurve(prefix, din)
	if err != nil {
		return sc, fmt.Errorf("difference: %w", err)
	}
	sc.Diff = chart(diff)

	cin := charts.CoverInput{Title: "Cover@τ"}
	for _, m := range rep.Models {
		s := charts.CoverSeries{Name: m.Name}
		for _, p := range m.Cover {
			s.Taus, s.Values = append(s.Taus, p.Tau), append(s.Values, p.Value)
		}
		cin.Series = append(cin.Series, s)
	}
	cover, err := charts.Cover(prefix, cin)
	if err != nil {
		return sc, fmt.Errorf("cover: %w", err)
	}
	sc.Cover = chart(cover)

	majIn := charts.CrossoverInput{Title: "maj@k (dashed) and pass@k"}
	for i, m := range rep.Models {
		if m.MajAtK == nil {
			continue
		}
		var at []analysis.Point
		for _, p := range m.MajAtK {
			at = append(at, m.PassAtK[p.K-1])
		}
		// Both curves in the model's colour, maj@k dashed: position in this
		// chart's series list would give base maj@k the RL model's colour.
		pk, mj := pointsSeries(m.Name+" pass@k", at, nil), pointsSeries(m.Name+" maj@k", m.MajAtK, nil)
		pk.Color, mj.Color, mj.Dashed = i+1, i+1, true
		majIn.Series = append(majIn.Series, pk, mj)
	}
	if len(majIn.Series) > 0 {
		maj, err := charts.Crossover(prefix+"_maj", majIn)
		if err != nil {
			return sc, fmt.Errorf("maj@k: %w", err)
		}
		sc.Maj = chart(maj)
	}

	if len(rep.Trajectory) > 1 {
		p1 := charts.TrajectoryLine{Name: "pass@1"}
		pn := charts.TrajectoryLine{Name: fmt.Sprintf("pass@%d", rep.KMax)}
		tin := charts.TrajectoryInput{Title: "pass@1 and pass@k_max by training step"}
		for _, tp := range rep.Trajectory {
			tin.Steps = append(tin.Steps, tp.Step)
			p1.Values, pn.Values = append(p1.Values, tp.Pass1), append(pn.Values, tp.PassN)
			if tp.Pass1CI != nil && tp.PassNCI != nil {
				p1.Lo, p1.Hi = append(p1.Lo, tp.Pass1CI.Lo), append(p1.Hi, tp.Pass1CI.Hi)
				pn.Lo, pn.Hi = append(pn.Lo, tp.PassNCI.Lo), append(pn.Hi, tp.PassNCI.Hi)
			}
		}
		for _, l := range []*charts.TrajectoryLine{&p1, &pn} {
			if len(l.Lo) != len(tin.Steps) {
				l.Lo, l.Hi = nil, nil
			}
		}
		tin.Lines = []charts.TrajectoryLine{p1}
		// pass@k at the ks between, off at first: a legend click reads the
		// trajectory at another k.
		for j, x := range rep.Trajectory[0].AtK {
			if x.K == 1 || x.K == rep.KMax {
				continue
			}
			l := charts.TrajectoryLine{Name: fmt.Sprintf("pass@%d", x.K), Hidden: true}
			for _, tp := range rep.Trajectory {
				if j < len(tp.AtK) {
					l.Values = append(l.Values, tp.AtK[j].Value)
				}
			}
			if len(l.Values) == len(tin.Steps) {
				tin.Lines = append(tin.Lines, l)
			}
		}
		tin.Lines = append(tin.Lines, pn)
		traj, err := charts.Trajectory(prefix, tin)
		if err != nil {
			return sc, fmt.Errorf("trajectory: %w", err)
		}
		sc.Trajectory = chart(traj)
		fin := charts.FlowsInput{Title: "problems gained and lost at each checkpoint"}
		for _, tp := range rep.Trajectory[1:] {
			anchor := func(kind string) string { return fmt.Sprintf("#flow-%d-%s", tp.Step, kind) }
			fin.Steps = append(fin.Steps, charts.FlowStep{Label: fmt.Sprintf("step %d", tp.Step), Gained: len(tp.Gained), Regained: len(tp.Regained),
				Lost: len(tp.Lost), URLs: map[string]string{"gained": anchor("gained"), "regained": anchor("gained"), "lost": anchor("lost")}})
		}
		flows, err := charts.Flows(prefix, fin)
		if err != nil {
			return sc, fmt.Errorf("flows: %w", err)
		}
		sc.Flows = chart(flows)
	}

	// UpSet needs intersections: none are computed past 64 models (a
	// comparison stored before the model limit), so none is drawn then.
	if len(rep.Models) > 3 && len(rep.Intersections) > 0 {
		uin := charts.UpSetInput{Title: "problems solved by exactly these models"}
		for _, m := range rep.Models {
			uin.Models = append(uin.Models, m.Name)
		}
		for _, x := range rep.Intersections {
			uin.Sets = append(uin.Sets, charts.UpSetBar{Members: x.Index, Count: x.Count})
		}
		up, err := charts.UpSet(prefix, uin)
		if err != nil {
			return sc, fmt.Errorf("UpSet: %w", err)
		}
		sc.UpSet = chart(up)
	}

	if sc.Cost, err = costChart(prefix, rep); err != nil {
		return sc, fmt.Errorf("cost: %w", err)
	}
	if sc.GPass, err = gPassChart(prefix, rep); err != nil {
		return sc, fmt.Errorf("G-Pass@k: %w", err)
	}
	if sc.SweepCurves, sc.SweepKStar, err = sweepCharts(prefix, rep); err != nil {
		return sc, fmt.Errorf("temperature sweep: %w", err)
	}

	for i, b := range rep.Breakdowns {
		gin := charts.CrossoverInput{Title: b.Group, Options: charts.Options{Height: 250}}
		for _, m := range b.Models {
			gs := pointsSeries(m.Name, m.PassAtK, nil)
			gs.Color = modelIndex(rep, m.Name) + 1
			gin.Series = append(gin.Series, gs)
		}
		if b.Crossover.Found && b.Crossover.K > 1 {
			gin.CrossoverK, gin.CrossoverLabel = b.Crossover.K, b.Crossover.Label
		}
		g, err := charts.Crossover(fmt.Sprintf("%s_g%d", prefix, i), gin)
		if err != nil {
			return sc, fmt.Errorf("%s %q: %w", b.By, b.Group, err)
		}
		gc := views.GroupChart{Chart: chart(g), B: b}
		if b.By == "subject" {
			sc.Subjects = append(sc.Subjects, gc)
		} else {
			sc.Levels = append(sc.Levels, gc)
		}
	}
	return sc, nil
}

// extrapolatedFrom is the first k at which either named model's curve is
// extrapolated (analysis.Beyond), or 0 when neither is.
func extrapolatedFrom(rep *analysis.Report, names ...string) int {
	from := 0
	for _, name := range names {
		if i := modelIndex(rep, name); i >= 0 && rep.Models[i].Beyond != nil {
			if k := rep.Models[i].Beyond.FromK; from == 0 || k < from {
				from = k
			}
		}
	}
	return from
}

// costChart draws pass@k against the completion tokens k samples per
// problem cost (analysis.Cost), one line per model with token counts in its
// colour of the other charts; none (an empty Chart) when no model has them.
func costChart(prefix string, rep *analysis.Report) (views.Chart, error) {
	in := charts.CostInput{Title: "pass@k against completion tokens per problem"}
	for i, m := range rep.Models {
		if m.Cost == nil || len(m.Cost.PassAtTokens) == 0 {
			continue
		}
		s := charts.CostSeries{Name: m.Name, Color: i + 1}
		for _, p := range m.Cost.PassAtTokens {
			s.Ks, s.Tokens, s.Values = append(s.Ks, p.K), append(s.Tokens, p.Tokens), append(s.Values, p.Value)
		}
		if m.Beyond != nil {
			s.DashedFrom = m.Beyond.FromK - 1 // extrapolated past the model's smallest n
		}
		in.Series = append(in.Series, s)
	}
	if len(in.Series) == 0 {
		return views.Chart{}, nil
	}
	c, err := charts.Cost(prefix, in)
	if err != nil {
		return views.Chart{}, err
	}
	return chart(c), nil
}

// gPassChart draws each model's pass^k (G-Pass@k at τ = 1) and mG-Pass@k
// (dashed) against k, with their 95% bootstrap bands; empty without
// G-Pass@k figures.
func gPassChart(prefix string, rep *analysis.Report) (views.Chart, error) {
	in := charts.CrossoverInput{Title: "pass^k (solid) and mG-Pass@k (dashed)"}
	for i, m := range rep.Models {
		if len(m.GPass) == 0 {
			continue
		}
		tau1 := len(m.GPass[0].Taus) - 1 // GPassTaus ends at τ = 1
		pk := charts.CurveSeries{Name: m.Name + " pass^k", Color: i + 1}
		mg := charts.CurveSeries{Name: m.Name + " mG-Pass@k", Color: i + 1, Dashed: true}
		for _, g := range m.GPass {
			pk.Ks, pk.Values = append(pk.Ks, g.K), append(pk.Values, g.Values[tau1])
			mg.Ks, mg.Values = append(mg.Ks, g.K), append(mg.Values, g.MG)
			if len(g.Lo) == len(g.Values) && len(g.Hi) == len(g.Values) {
				pk.Lo, pk.Hi = append(pk.Lo, g.Lo[tau1]), append(pk.Hi, g.Hi[tau1])
				mg.Lo, mg.Hi = append(mg.Lo, g.MGLo), append(mg.Hi, g.MGHi)
			}
		}
		if len(pk.Lo) != len(pk.Ks) {
			pk.Lo, pk.Hi, mg.Lo, mg.Hi = nil, nil, nil, nil
		}
		in.Series = append(in.Series, pk, mg)
	}
	if len(in.Series) == 0 {
		return views.Chart{}, nil
	}
	c, err := charts.Crossover(prefix+"_gpass", in)
	if err != nil {
		return views.Chart{}, err
	}
	return chart(c), nil
}

// sweepCharts draws a temperature sweep: every swept model's pass@k at each
// temperature and the union across them (dashed), and k* against
// temperature with its bootstrap band. Empty without a sweep.
func sweepCharts(prefix string, rep *analysis.Report) (views.Chart, views.Chart, error) {
	sw := rep.TemperatureSweep
	if sw == nil || len(sw.Models) == 0 {
		return views.Chart{}, views.Chart{}, nil
	}
	in := charts.CrossoverInput{Title: "pass@k per temperature; union across temperatures dashed"}
	for _, m := range sw.Models {
		for ti, t := range m.Temperatures {
			s := charts.CurveSeries{Name: fmt.Sprintf("%s T=%g", m.Model, t.Temperature), Color: modelIndex(rep, t.Run) + 1,
				Symbol: charts.Symbols[ti%len(charts.Symbols)]}
			for _, p := range t.PassAtK {
				s.Ks, s.Values = append(s.Ks, p.K), append(s.Values, p.Value)
			}
			in.Series = append(in.Series, s)
		}
		u := charts.CurveSeries{Name: m.Model + " union of temperatures", Dashed: true, Color: modelIndex(rep, m.Temperatures[0].Run) + 1}
		for _, p := range m.Union.AtK {
			u.Ks, u.Values = append(u.Ks, p.K), append(u.Values, p.Union)
		}
		in.Series = append(in.Series, u)
	}
	curves, err := charts.Crossover(prefix+"_sweep", in)
	if err != nil {
		return views.Chart{}, views.Chart{}, err
	}
	kin := charts.KStarInput{Title: "crossover k* against temperature (95% band)", KMax: float64(rep.KSampled)}
	byOther := map[string]int{}
	kin.KMax = 0
	for i, c := range sw.Crossovers {
		if i == 0 || c.Temperature < kin.XMin {
			kin.XMin = c.Temperature
		}
		kin.XMax = max(kin.XMax, c.Temperature)
		kin.KMax = max(kin.KMax, float64(c.KMax))
	}
	for _, c := range sw.Crossovers {
		if !c.Found {
			continue
		}
		name := tempsweepStem(c)
		i, ok := byOther[name]
		if !ok {
			i = len(kin.Series)
			byOther[name] = i
			kin.Series = append(kin.Series, charts.KStarSeries{Name: name + " vs " + baseStem(c), Color: modelIndex(rep, c.Other) + 1})
		}
		s := &kin.Series[i]
		if n := len(s.Temps); n > 0 && s.Temps[n-1] >= c.Temperature {
			continue
		}
		end := func(b tempsweep.Bound) float64 {
			if !b.Found {
				return float64(c.KMax)
			}
			return min(max(b.K, 1), kin.KMax)
		}
		s.Temps, s.K = append(s.Temps, c.Temperature), append(s.K, min(c.K, kin.KMax))
		s.Lo, s.Hi = append(s.Lo, end(c.Lo)), append(s.Hi, end(c.Hi))
	}
	if len(kin.Series) == 0 || kin.KMax < 1 {
		return chart(curves), views.Chart{}, nil
	}
	ks, err := charts.KStarByTemperature(prefix, kin)
	if err != nil {
		return views.Chart{}, views.Chart{}, err
	}
	return chart(curves), chart(ks), nil
}

// tempsweepStem names the swept side of a crossover: the other model's
// name without "@T=…", or the base model's when only it is swept.
func tempsweepStem(c tempsweep.Crossover) string {
	if c.BaseSwept {
		return tempsweep.Stem(c.Base)
	}
	return tempsweep.Stem(c.Other)
}

// baseStem names the other side of a crossover.
func baseStem(c tempsweep.Crossover) string {
	if c.BaseSwept {
		return tempsweep.Stem(c.Other)
	}
	return tempsweep.Stem(c.Base)
}
