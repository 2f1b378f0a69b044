package web

import (
	"fmt"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/charts"
	"github.com/reach-lab/reach/web/views"
)

func chart(s charts.Snippet) views.Chart { return views.Chart{ID: s.ID, HTML: string(s.HTML)} }

// reportCharts builds the comparison page's charts from its report.
func reportCharts(id int64, rep *analysis.Report) (views.Chart, []views.Chart, views.Chart, error) {
	prefix := fmt.Sprintf("c%d", id)
	in := charts.CrossoverInput{Title: "pass@k"}
	for _, m := range rep.Models {
		s := charts.CurveSeries{Name: m.Name}
		for _, p := range m.PassAtK {
			s.Ks = append(s.Ks, p.K)
			s.Values = append(s.Values, p.Value)
		}
		in.Series = append(in.Series, s)
	}
	if cr := rep.Pairs[0].Crossover; cr.Found && cr.K > 1 {
		in.CrossoverK, in.CrossoverLabel = cr.K, cr.Label
	}
	cross, err := charts.Crossover(prefix, in)
	if err != nil {
		return views.Chart{}, nil, views.Chart{}, fmt.Errorf("crossover chart: %w", err)
	}

	var venns []views.Chart
	for i, p := range rep.Pairs {
		v, err := charts.Venn(fmt.Sprintf("%s_%d", prefix, i+1), charts.VennInput{
			A: p.Base, B: p.Other, Both: p.Solved.Both, AOnly: p.Solved.BaseOnly, BOnly: p.Solved.OtherOnly,
			Neither: p.Solved.Neither, Total: rep.Problems,
			RegionURL: fmt.Sprintf("/comparisons/%d?pair=%d&region={region}#problems", id, i+1),
		})
		if err != nil {
			return views.Chart{}, nil, views.Chart{}, fmt.Errorf("Venn chart: %w", err)
		}
		venns = append(venns, chart(v))
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
		return views.Chart{}, nil, views.Chart{}, fmt.Errorf("histogram chart: %w", err)
	}
	return chart(cross), venns, chart(hist), nil
}
