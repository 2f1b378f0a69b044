package web

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/charts"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// The comparison page's debate figures (issue 15): CoT-pass@k next to
// pass@k (Wen et al. 2025), perplexity under the base model (Yue et al.
// 2025, Fig. 6), answer entropy and empirical support at ε (Wu et al. 2025,
// "The Invisible Leash", arXiv 2507.14843). The report carries their data
// (analysis.AttachDebate); these functions only draw it.

// supportEps reads ?eps (the support threshold ε, a fraction in [0, 1]).
// Absent means 0; anything else that is not such a number is an error to
// show, not silently 0.
func supportEps(r *http.Request) (float64, error) {
	v := strings.TrimSpace(r.URL.Query().Get("eps"))
	if v == "" {
		return 0, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || x < 0 || x > 1 {
		return 0, fmt.Errorf("ε %q is not a number from 0 to 1", v)
	}
	return x, nil
}

// supportAt is the report's support part at eps (the report's own at 0).
func supportAt(rep *analysis.Report, eps float64) (*analysis.SupportReport, error) {
	if eps == 0 && rep.Support != nil {
		return rep.Support, nil
	}
	return rep.SupportAt(eps)
}

// modelIndex is the position of a model in the report (its colour), or -1.
func modelIndex(rep *analysis.Report, name string) int {
	return slices.IndexFunc(rep.Models, func(m analysis.ModelReport) bool { return m.Name == name })
}

// debateCharts draws the debate figures of rep; a figure without data has
// an empty Chart. Support is drawn at eps.
func debateCharts(prefix string, rep *analysis.Report, eps float64) (views.DebateCharts, error) {
	var dc views.DebateCharts
	if cot := rep.CoT; cot != nil && cot.Problems > 0 && cot.KMax >= 1 && len(cot.Models) > 0 {
		in := charts.CrossoverInput{Title: fmt.Sprintf("CoT-pass@k (solid) and pass@k (dashed) on %d judged problems", cot.Problems)}
		for _, m := range cot.Models {
			col := modelIndex(rep, m.Name) + 1
			ans := curveSeries(m.Name+" pass@k", m.PassAtK, nil)
			ans.Dashed, ans.Color = true, col
			cs := curveSeries(m.Name+" CoT-pass@k", m.CoTPassAtK, m.CoTPassAtKCI)
			cs.Color = col
			in.Series = append(in.Series, cs, ans)
		}
		// The crossover line is attached to the first series: the base model's CoT curve.
		if len(cot.Pairs) > 0 && cot.Pairs[0].Crossover.Found && cot.Pairs[0].Crossover.K > 1 {
			in.CrossoverK, in.CrossoverLabel = cot.Pairs[0].Crossover.K, cot.Pairs[0].Crossover.Label
		}
		c, err := charts.Crossover(prefix+"_cot", in)
		if err != nil {
			return dc, fmt.Errorf("CoT-pass@k: %w", err)
		}
		dc.CoT = chart(c)
	}
	if p := rep.Perplexity; p != nil {
		in := charts.PerplexityInput{Title: "perplexity of completions under the base model", YName: "perplexity"}
		if p.Scorer != "" {
			in.YName = "perplexity under " + p.Scorer
		}
		for _, m := range p.Models {
			if m.Correct == nil && m.Incorrect == nil {
				continue
			}
			in.Groups = append(in.Groups, charts.BoxGroup{Name: m.Name, Correct: box(m.Correct), Incorrect: box(m.Incorrect)})
		}
		if len(in.Groups) > 0 {
			c, err := charts.Perplexity(prefix, in)
			if err != nil {
				return dc, fmt.Errorf("perplexity: %w", err)
			}
			dc.Perplexity = chart(c)
		}
	}
	if d := rep.Diversity; d != nil && len(d.Models) == len(rep.Models) && d.Models[0] != nil {
		in := charts.EntropyInput{Title: "answer entropy per problem", XName: rep.Models[0].Name + ": answer entropy (bits)"}
		for i := 1; i < len(d.Models); i++ {
			if d.Models[i] == nil {
				continue
			}
			s := charts.EntropySeries{Name: d.Models[i].Name}
			for _, pt := range entropyPairs(d.Models[0], d.Models[i]) {
				s.Points = append(s.Points, charts.EntropyPoint{ProblemID: pt.id, X: pt.base.Entropy, Y: pt.other.Entropy})
			}
			if len(s.Points) > 0 {
				in.Series = append(in.Series, s)
			}
		}
		if len(in.Series) > 0 {
			c, err := charts.Entropy(prefix, in)
			if err != nil {
				return dc, fmt.Errorf("answer entropy: %w", err)
			}
			dc.Entropy = chart(c)
		}
	}
	return dc, supportChart(&dc, prefix, rep, eps)
}

// supportChart draws the support figure at eps into dc.
func supportChart(dc *views.DebateCharts, prefix string, rep *analysis.Report, eps float64) error {
	sup, err := supportAt(rep, eps)
	if err != nil {
		return fmt.Errorf("support at ε = %g: %w", eps, err)
	}
	dc.Support, dc.Eps, dc.SupportChart = sup, eps, views.Chart{}
	if sup != nil && len(sup.Pairs) > 0 {
		in := charts.SupportInput{Title: fmt.Sprintf("empirical support at ε = %g", eps)}
		for _, p := range sup.Pairs {
			in.Bars = append(in.Bars, charts.SupportBar{Name: p.Other + " vs " + p.Base, Preserved: p.Preserved, Shrunk: p.Shrunk,
				Expanded: p.Expanded, Outside: p.Outside})
		}
		c, err := charts.Support(prefix, in)
		if err != nil {
			return fmt.Errorf("support: %w", err)
		}
		dc.SupportChart = chart(c)
	}
	return nil
}

func box(s *analysis.PerplexityStats) *charts.Box {
	if s == nil {
		return nil
	}
	return &charts.Box{N: s.N, Min: s.Min, Q1: s.Q1, Median: s.Median, Q3: s.Q3, Max: s.Max}
}

type entropyPair struct {
	id          string
	base, other analysis.ProblemDiversity
}

// entropyPairs lists the problems both models answered, in the base
// model's order.
func entropyPairs(base, other *analysis.ModelDiversity) []entropyPair {
	byID := make(map[string]analysis.ProblemDiversity, len(other.PerProblem))
	for _, p := range other.PerProblem {
		byID[p.ProblemID] = p
	}
	var out []entropyPair
	for _, b := range base.PerProblem {
		if o, ok := byID[b.ProblemID]; ok && b.Answered > 0 && o.Answered > 0 {
			out = append(out, entropyPair{b.ProblemID, b, o})
		}
	}
	return out
}

// memoDebateCharts is debateCharts once per report at ε = 0; the support
// figure at another ε (a query parameter anybody may vary) is drawn per
// request rather than kept.
func memoDebateCharts(e *analysis.Entry, id int64, eps float64) (views.DebateCharts, error) {
	prefix := fmt.Sprintf("c%d", id)
	v, err := e.Memo(fmt.Sprintf("debate-charts|%d", id), func() (any, error) { return debateCharts(prefix, e.Report, 0) })
	if err != nil {
		return views.DebateCharts{}, err
	}
	dc := v.(views.DebateCharts) // a copy: the memo's stays at ε = 0
	if eps != 0 {
		err = supportChart(&dc, prefix, e.Report, eps)
	}
	return dc, err
}

// debateTable builds the data table of a debate chart (cot, perplexity,
// entropy, support), or ErrNotFound when the report has none.
func debateTable(rep *analysis.Report, name string, eps float64) (chartTable, error) {
	t := chartTable{Chart: name}
	none := fmt.Errorf("chart %q: no data yet: %w", name, store.ErrNotFound)
	switch name {
	case "cot":
		cot := rep.CoT
		if cot != nil && cot.Status == analysis.DebateUnavailable && cot.Note != "" {
			return t, fmt.Errorf("chart %q: not available: %s: %w", name, cot.Note, store.ErrNotFound)
		}
		if cot == nil || cot.Problems == 0 || len(cot.Models) == 0 {
			return t, none
		}
		t.Title = fmt.Sprintf("CoT-pass@k and pass@k by k on the %d problems whose answer-correct samples are all judged or labelled (%d left out); fractions",
			cot.Problems, cot.LeftOut)
		if cot.Window > 0 {
			t.Title += fmt.Sprintf("; first %d samples per problem and model", cot.Window)
		}
		t.Columns = []string{"k"}
		bands := make([]map[int]analysis.Band, len(cot.Models))
		for i, m := range cot.Models {
			t.Columns = append(t.Columns, m.Name+" pass@k", m.Name+" CoT-pass@k", m.Name+" CoT 95% lo", m.Name+" CoT 95% hi")
			bands[i] = map[int]analysis.Band{}
			for _, b := range m.CoTPassAtKCI {
				bands[i][b.K] = b
			}
		}
		for k := 1; k <= cot.KMax; k++ {
			row := []any{k}
			for i, m := range cot.Models {
				row = append(row, m.PassAtK[k-1].Value, m.CoTPassAtK[k-1].Value)
				if b, ok := bands[i][k]; ok {
					row = append(row, b.Lo, b.Hi)
				} else {
					row = append(row, nil, nil)
				}
			}
			t.Rows = append(t.Rows, row)
		}
	case "perplexity":
		p := rep.Perplexity
		if p == nil || len(p.Models) == 0 {
			return t, none
		}
		t.Title = "perplexity of completions under the scoring model " + p.Scorer + " (exp of the mean negative log-probability per completion token)"
		t.Columns = []string{"model", "role", "completions", "n", "min", "q1", "median", "q3", "max", "mean", "failed"}
		for _, m := range p.Models {
			for _, x := range []struct {
				what string
				s    *analysis.PerplexityStats
			}{{"correct", m.Correct}, {"incorrect", m.Incorrect}} {
				if x.s == nil {
					t.Rows = append(t.Rows, []any{m.Name, m.Role, x.what, 0, nil, nil, nil, nil, nil, nil, m.Failed})
					continue
				}
				t.Rows = append(t.Rows, []any{m.Name, m.Role, x.what, x.s.N, x.s.Min, x.s.Q1, x.s.Median, x.s.Q3, x.s.Max, x.s.Mean, m.Failed})
			}
		}
	case "entropy":
		d := rep.Diversity
		if d == nil || len(d.Models) != len(rep.Models) || d.Models[0] == nil {
			return t, none
		}
		t.Title = "distinct final answers and answer entropy (bits) per problem"
		if d.Grouping != "" {
			t.Title += "; " + d.Grouping
		}
		t.Columns = []string{"problem_id"}
		byModel := make([]map[string]analysis.ProblemDiversity, len(d.Models))
		for i, m := range d.Models {
			if m == nil {
				continue
			}
			t.Columns = append(t.Columns, m.Name+" answered", m.Name+" distinct", m.Name+" entropy_bits")
			byModel[i] = map[string]analysis.ProblemDiversity{}
			for _, p := range m.PerProblem {
				byModel[i][p.ProblemID] = p
			}
		}
		for _, row := range rep.Rows {
			r := []any{row.Key}
			for i, m := range d.Models {
				if m == nil {
					continue
				}
				if p, ok := byModel[i][row.Key]; ok {
					r = append(r, p.Answered, p.Distinct, p.Entropy)
				} else {
					r = append(r, nil, nil, nil)
				}
			}
			t.Rows = append(t.Rows, r)
		}
	case "support":
		sup, err := supportAt(rep, eps)
		if err != nil {
			return t, err
		}
		if sup == nil || len(sup.Pairs) == 0 {
			return t, none
		}
		t.Title = fmt.Sprintf("empirical support at ε = %g: problems by region (a problem is in a model's support when c/n ≥ ε and c ≥ 1)", eps)
		t.Columns = []string{"base", "other", "epsilon", "preserved", "shrunk", "expanded", "outside", "retention", "discovery",
			"shrunk_significant_holm", "expanded_significant_holm", "shrunk_problem_ids", "expanded_problem_ids"}
		for _, p := range sup.Pairs {
			t.Rows = append(t.Rows, []any{p.Base, p.Other, sup.Eps, p.Preserved, p.Shrunk, p.Expanded, p.Outside, ptrValue(p.Retention),
				ptrValue(p.Discovery), p.ShrunkSignificantHolm, p.ExpandedSignificantHolm, testIDs(p.ShrunkTests), testIDs(p.ExpandedTests)})
		}
	default:
		return t, fmt.Errorf("chart %q: %w", name, store.ErrNotFound)
	}
	return t, nil
}

func ptrValue(x *float64) any {
	if x == nil {
		return nil
	}
	return *x
}

func testIDs(ts []analysis.ProblemTest) string {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.ProblemID
	}
	return strings.Join(ids, " ")
}

// isDebateChart reports whether name is one of the debate charts.
func isDebateChart(name string) bool {
	return name == "cot" || name == "perplexity" || name == "entropy" || name == "support"
}
