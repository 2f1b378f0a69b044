package web

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/csvcell"
	"github.com/reach-lab/reach/internal/store"
)

// chartTable is the data behind one chart, as a table: what its CSV and
// JSON downloads hold. Values are numbers (fractions, not percent) or text.
type chartTable struct {
	Chart   string   `json:"chart"`
	Title   string   `json:"title"`
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}

// chartNames lists the downloadable charts of a report: crossover,
// histogram, diff, cover and one venn-N per pair (N from 1); cost and the
// debate charts (cot, perplexity, entropy, support) once they have data.
func chartNames(rep *analysis.Report) []string {
	out := []string{"crossover", "histogram", "diff", "cover"}
	for i := range rep.Pairs {
		out = append(out, fmt.Sprintf("venn-%d", i+1))
	}
	if _, err := costTable(rep); err == nil {
		out = append(out, "cost")
	}
	for _, name := range []string{"cot", "perplexity", "entropy", "support"} {
		if _, err := debateTable(rep, name, 0); err == nil {
			out = append(out, name)
		}
	}
	return out
}

// chartData builds the table of the named chart, or ErrNotFound.
func chartData(rep *analysis.Report, name string) (chartTable, error) {
	t := chartTable{Chart: name}
	switch {
	case name == "crossover":
		t.Title = "pass@k by k (unbiased estimator; fractions)"
		t.Columns = []string{"k"}
		for _, m := range rep.Models {
			t.Columns = append(t.Columns, m.Name)
		}
		// Intervals exist at the ks the chart draws (every k up to 64, then 8
		// per doubling); other rows leave them empty.
		withCI := true
		bands := make([]map[int]analysis.Band, len(rep.Models))
		for i, m := range rep.Models {
			withCI = withCI && len(m.PassAtKCI) > 0
			bands[i] = map[int]analysis.Band{}
			for _, b := range m.PassAtKCI {
				bands[i][b.K] = b
			}
		}
		if withCI {
			t.Title += "; 95% intervals at k ≤ 64 and 8 ks per doubling beyond"
			for _, m := range rep.Models {
				t.Columns = append(t.Columns, m.Name+" 95% lo", m.Name+" 95% hi")
			}
		}
		// The page's biased view (?estimator=biased) draws the biased
		// estimator's curves: its data carries them, named.
		biased := true
		for _, m := range rep.Models {
			biased = biased && len(m.PassAtKBiased) >= rep.KMax
		}
		if biased {
			t.Title += "; and the biased estimator 1 − (1 − c/n)^k, as the page's biased view draws it"
			for _, m := range rep.Models {
				t.Columns = append(t.Columns, m.Name+" biased")
			}
		}
		for k := 1; k <= rep.KMax; k++ {
			row := []any{k}
			for _, m := range rep.Models {
				row = append(row, m.PassAtK[k-1].Value)
			}
			if withCI {
				for i := range rep.Models {
					if b, ok := bands[i][k]; ok {
						row = append(row, b.Lo, b.Hi)
					} else {
						row = append(row, nil, nil)
					}
				}
			}
			if biased {
				for _, m := range rep.Models {
					row = append(row, m.PassAtKBiased[k-1].Value)
				}
			}
			t.Rows = append(t.Rows, row)
		}
	case name == "histogram":
		t.Title = "problems by per-problem accuracy c/n"
		t.Columns = []string{"bin", "lo", "hi"}
		for _, m := range rep.Models {
			t.Columns = append(t.Columns, m.Name)
		}
		for i, b := range rep.Models[0].Histogram {
			row := []any{b.Label, b.Lo, b.Hi}
			for _, m := range rep.Models {
				row = append(row, m.Histogram[i].Count)
			}
			t.Rows = append(t.Rows, row)
		}
	case name == "diff":
		t.Title = "pass@k(model) − pass@k(base) by k (fractions)"
		t.Columns = []string{"k"}
		for _, p := range rep.Pairs {
			t.Columns = append(t.Columns, p.Other+" − "+p.Base)
		}
		for k := 1; k <= rep.KMax; k++ {
			row := []any{k}
			for _, p := range rep.Pairs {
				row = append(row, p.Diff[k-1].Value)
			}
			t.Rows = append(t.Rows, row)
		}
	case name == "cover":
		t.Title = "Cover@τ: share of problems with c/n ≥ τ"
		t.Columns = []string{"tau"}
		for _, m := range rep.Models {
			t.Columns = append(t.Columns, m.Name)
		}
		for i, tau := range analysis.CoverTaus {
			row := []any{tau}
			for _, m := range rep.Models {
				row = append(row, m.Cover[i].Value)
			}
			t.Rows = append(t.Rows, row)
		}
	case strings.HasPrefix(name, "venn-"):
		i, err := strconv.Atoi(strings.TrimPrefix(name, "venn-"))
		if err != nil || i < 1 || i > len(rep.Pairs) {
			return t, fmt.Errorf("chart %q: %w", name, store.ErrNotFound)
		}
		p := rep.Pairs[i-1]
		t.Title = fmt.Sprintf("solved sets at k = %d: %s vs %s", rep.KMax, p.Base, p.Other)
		t.Columns = []string{"region", "problems", "problem_ids"}
		// Every region's problems (a new user found both and neither
		// without ids), from the per-problem rows, in dataset order.
		var both, neither []string
		for _, r := range rep.Rows {
			if i < len(r.Counts) {
				switch b, o := r.Counts[0].C >= 1, r.Counts[i].C >= 1; {
				case b && o:
					both = append(both, r.Key)
				case !b && !o:
					neither = append(neither, r.Key)
				}
			}
		}
		t.Rows = [][]any{
			{"both", p.Solved.Both, strings.Join(both, " ")},
			{"base-only", p.Solved.BaseOnly, strings.Join(p.BaseOnly, " ")},
			{"other-only", p.Solved.OtherOnly, strings.Join(p.OtherOnly, " ")},
			{"neither", p.Solved.Neither, strings.Join(neither, " ")},
		}
	case name == "cost":
		return costTable(rep)
	case isDebateChart(name):
		return debateTable(rep, name, 0)
	default:
		return t, fmt.Errorf("chart %q: %w", name, store.ErrNotFound)
	}
	return t, nil
}

// costTable is the cost chart's data: per model with token counts and k,
// the completion tokens per problem k samples take and pass@k (a fraction),
// one row each (models' ks may differ). ErrNotFound when no model has
// token counts.
func costTable(rep *analysis.Report) (chartTable, error) {
	t := chartTable{Chart: "cost", Title: "pass@k against completion tokens per problem (k × mean completion tokens per sample; pass@k as a fraction)",
		Columns: []string{"model", "k", "tokens_per_problem", "pass_at_k"}}
	for _, m := range rep.Models {
		if m.Cost == nil {
			continue
		}
		for _, p := range m.Cost.PassAtTokens {
			t.Rows = append(t.Rows, []any{m.Name, p.K, p.Tokens, p.Value})
		}
	}
	if len(t.Rows) == 0 {
		return t, fmt.Errorf("chart \"cost\": no model has token counts: %w", store.ErrNotFound)
	}
	return t, nil
}

// csvCell writes a value; text that a spreadsheet would run as a formula
// gets a leading apostrophe (csvcell.Safe).
func csvCell(v any) string {
	switch x := v.(type) {
	case string:
		return csvcell.Safe(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case nil:
		return ""
	default:
		return fmt.Sprint(x)
	}
}

// writeChartData answers file ("crossover.csv", "venn-1.json") with the
// chart's table, encoded once per report; an unknown chart or extension is
// ErrNotFound.
func writeChartData(w http.ResponseWriter, r *http.Request, e *analysis.Entry, file string) error {
	name, ext, ok := strings.Cut(file, ".")
	if !ok || (ext != "csv" && ext != "json") {
		return fmt.Errorf("chart data %q (want NAME.csv or NAME.json): %w", file, store.ErrNotFound)
	}
	build := func() ([]byte, error) {
		t, err := chartData(e.Report, name)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		err = encodeChartTable(&buf, t, ext)
		return buf.Bytes(), err
	}
	var b body
	var err error
	if name == "support" {
		// Support at the ε of the query (?eps): drawn per request unless it
		// is the report's own (ε = 0), so that no query fills the memo.
		eps, err := supportEps(r)
		if err != nil {
			return badForm("%v", err)
		}
		build = func() ([]byte, error) {
			t, err := debateTable(e.Report, name, eps)
			if err != nil {
				return nil, err
			}
			var buf bytes.Buffer
			err = encodeChartTable(&buf, t, ext)
			return buf.Bytes(), err
		}
		if eps != 0 {
			raw, err := build()
			if err != nil {
				return err
			}
			b = body{raw: raw}
		}
	}
	if b.raw == nil {
		if b, err = memoBody(e, "data/"+file, build); err != nil {
			return err
		}
	}
	fname := fmt.Sprintf("reach-%d-%s.%s", e.Report.ComparisonID, name, ext)
	w.Header().Set("Content-Disposition", `attachment; filename="`+fname+`"`)
	if ext == "json" {
		w.Header().Set("Content-Type", "application/json")
	} else {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	}
	b.write(w, r)
	return nil
}

// encodeChartTable writes t as JSON or CSV.
func encodeChartTable(w io.Writer, t chartTable, ext string) error {
	if ext == "json" {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(t)
	}
	cw := csv.NewWriter(w)
	cols := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		cols[i] = csvCell(c)
	}
	if err := cw.Write(cols); err != nil {
		return err
	}
	for _, row := range t.Rows {
		rec := make([]string, len(row))
		for i, v := range row {
			rec[i] = csvCell(v)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// chartData serves /comparisons/{id}/data/{chart}: the data of one chart of
// the report variant the query selects.
func (s *Server) chartData(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.dataFail(w, r, err)
		return
	}
	if chiParam(r, "chart") == "tokens.csv" { // per-token divergence: not from the report
		if err := s.tokensCSV(w, r, id); err != nil {
			s.dataFail(w, r, err)
		}
		return
	}
	opt, err := s.reportOptionsFor(r, id)
	if err != nil {
		s.dataFail(w, r, err)
		return
	}
	e, err := s.reports.Get(r.Context(), id, opt)
	if err != nil {
		s.dataFail(w, r, err)
		return
	}
	if err := writeChartData(w, r, e, chiParam(r, "chart")); err != nil {
		s.dataFail(w, r, err)
	}
}

// dataFail answers a failed chart data request in the format asked for:
// {"error": reason} for NAME.json, a plain-text line otherwise, so a script
// or spreadsheet fetching the data gets the reason and not an HTML page.
// ErrNotFound is 404 with its message, a bad query (formError) 400; anything
// else is 500 with the request id to look up in the server log.
func (s *Server) dataFail(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	code, msg := http.StatusNotFound, err.Error()
	var fe formError
	switch {
	case errors.As(err, &fe):
		code = http.StatusBadRequest
	case errors.Is(err, analysis.ErrNoData):
		code = http.StatusConflict
	case !errors.Is(err, store.ErrNotFound):
		code, msg = http.StatusInternalServerError, s.internal(r, err)
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if strings.HasSuffix(chiParam(r, "chart"), ".json") || isAPI(r) { // the API's errors are JSON
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	_, _ = io.WriteString(w, msg+"\n")
}
