package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// completionSearchBudget bounds a search in completions that the search
// index cannot finish (not built yet, or a query without trigrams): at
// most this many samples are read (store.SearchTexts: a few of every
// problem first, then the table's first problems to the end). 50,000
// one-kilobyte completions take about a second on a loaded 2-core machine.
var completionSearchBudget = 50_000 // a variable for tests (SetCompletionSearchBudget)

// maxIndexCandidates bounds the samples the search index may hand over
// for checking in one search (store.TextSearch.MaxCandidates): each
// candidate's text is read and lower-cased, 20-120 µs apiece (candidates
// are the long texts), so 20,000 is about a second on a loaded 2-core
// machine. A query found in most texts ("the final answer is": 24 % of
// them) would check millions; it is read within a bound instead.
var maxIndexCandidates = 20_000 // a variable for tests (SetMaxIndexCandidates)

// previewChars is how much of a statement the table's one-line preview
// reads (the cell cuts it to its width).
const previewChars = 160

// maxQuery bounds the search text and the answer filter (characters).
const maxQuery = 200

// readTableQuery reads the problem table's sort, search and sample filters
// from the query into f; unknown values are dropped.
func readTableQuery(q url.Values, models int, f *views.ProblemFilter) {
	if s := q.Get("sort"); validSort(s, models) {
		f.Sort = s
		switch q.Get("dir") {
		case "asc":
			f.Desc = false
		case "desc":
			f.Desc = true
		default:
			f.Desc = views.SortDescFirst(s)
		}
	}
	f.Query = clip(strings.TrimSpace(q.Get("q")), maxQuery)
	if in := q.Get("in"); in == "completions" || in == "both" {
		f.In = in
	}
	if v := q.Get("review"); v == "unreviewed" || v == "reviewed" || slices.Contains(store.ReviewVerdicts, v) {
		f.Verdict = v
	}
	if v := q.Get("finish"); slices.Contains(views.FinishReasons, v) {
		f.Finish = v
	}
	f.Answer = clip(strings.TrimSpace(q.Get("answer")), maxQuery)
}

// clip cuts s to at most n characters, without NUL characters and invalid
// UTF-8, which no stored text holds (Postgres refuses both in a query: a
// search for "%00" was a server error).
func clip(s string, n int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, ""), "\x00", "")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// validSort says whether key names a sortable column: problem, subject,
// level, c0 … c{models-1} (a model's c/n), diff (the selected model's c/n
// minus the base model's) or p (Fisher's p-value).
func validSort(key string, models int) bool {
	switch key {
	case "problem", "subject", "level", "diff", "p":
		return true
	}
	if m, ok := strings.CutPrefix(key, "c"); ok {
		i, err := strconv.Atoi(m)
		return err == nil && i >= 0 && i < models && m == strconv.Itoa(i)
	}
	return false
}

func rate(c analysis.ProblemRow, m int) float64 {
	if c.Counts[m].N == 0 {
		return 0
	}
	return float64(c.Counts[m].C) / float64(c.Counts[m].N)
}

// compareLevels orders levels numerically when both are numbers.
func compareLevels(a, b string) int {
	ai, aerr := strconv.Atoi(strings.TrimPrefix(a, "Level "))
	bi, berr := strconv.Atoi(strings.TrimPrefix(b, "Level "))
	if aerr == nil && berr == nil {
		return cmp.Compare(ai, bi)
	}
	return strings.Compare(a, b)
}

// sortRows orders order (indices into rows) by f's column, ties in dataset
// order. Problems without a p-value (neither model of the pair solved
// them, or both did) come last in both directions.
func sortRows(rows []analysis.ProblemRow, order []int, f views.ProblemFilter) {
	if f.Sort == "" {
		return
	}
	var by func(a, b *analysis.ProblemRow) int
	switch f.Sort {
	case "problem":
		by = func(a, b *analysis.ProblemRow) int { return cmp.Compare(a.Idx, b.Idx) }
	case "subject":
		by = func(a, b *analysis.ProblemRow) int { return strings.Compare(a.Subject, b.Subject) }
	case "level":
		by = func(a, b *analysis.ProblemRow) int { return compareLevels(a.Level, b.Level) }
	case "diff":
		by = func(a, b *analysis.ProblemRow) int {
			return cmp.Compare(rate(*a, f.Pair)-rate(*a, 0), rate(*b, f.Pair)-rate(*b, 0))
		}
	case "p":
		by = func(a, b *analysis.ProblemRow) int { return cmp.Compare(a.P[f.Pair], b.P[f.Pair]) }
	default:
		m, _ := strconv.Atoi(f.Sort[1:])
		by = func(a, b *analysis.ProblemRow) int { return cmp.Compare(rate(*a, m), rate(*b, m)) }
	}
	slices.SortStableFunc(order, func(i, j int) int {
		a, b := &rows[i], &rows[j]
		if f.Sort == "p" {
			if na, nb := a.P[f.Pair] < 0, b.P[f.Pair] < 0; na != nb {
				if na {
					return 1
				}
				return -1
			}
		}
		c := by(a, b)
		if f.Desc {
			c = -c
		}
		if c != 0 {
			return c
		}
		return cmp.Compare(a.Idx, b.Idx)
	})
}

// facets reads which problems have samples with each finish reason and
// extracted answer, once per report version (a scan of every sample).
func (s *Server) facets(ctx context.Context, e *analysis.Entry) (store.SampleFacets, error) {
	v, err := e.Memo("sample-facets", func() (any, error) {
		var runs []int64
		for _, m := range e.Report.Models {
			if m.HasTexts {
				runs = append(runs, m.RunID)
			}
		}
		return s.st.SampleFacetsFor(ctx, runs)
	})
	if err != nil {
		return store.SampleFacets{}, err
	}
	return v.(store.SampleFacets), nil
}

// tableRows applies the search and the sample filters to the table's
// candidate rows (indices into rep.Rows, already filtered by region,
// subject and level and in display order) and returns the matching ones.
// A search in completions reads the samples of the first candidates up
// to completionSearchBudget and reports in search how far it got.
func (s *Server) tableRows(ctx context.Context, e *analysis.Entry, datasetID int64, reviews map[int64]store.Review,
	f views.ProblemFilter, order []int, search *views.SearchInfo) ([]int, error) {
	rep := e.Report
	keep := func(pred func(i int) bool) {
		out := order[:0:0]
		for _, i := range order {
			if pred(i) {
				out = append(out, i)
			}
		}
		order = out
	}
	if f.Verdict != "" {
		keep(func(i int) bool {
			rv, ok := reviews[rep.Rows[i].ProblemID]
			switch f.Verdict {
			case "unreviewed":
				return !ok
			case "reviewed":
				return ok
			}
			return ok && rv.Verdict == f.Verdict
		})
	}
	if f.Finish != "" || f.Answer != "" {
		fc, err := s.facets(ctx, e)
		if err != nil {
			return nil, err
		}
		if f.Finish != "" {
			reason := f.Finish
			if reason == "none" {
				reason = ""
			}
			set := fc.Finish[reason]
			keep(func(i int) bool { return set[rep.Rows[i].ProblemID] })
		}
		if f.Answer != "" {
			set := fc.Answers[f.Answer]
			keep(func(i int) bool { return set[rep.Rows[i].ProblemID] })
		}
	}
	if f.Query == "" {
		return order, nil
	}
	inStatements := f.In == "" || f.In == "both"
	matched := map[int64]bool{}
	if inStatements {
		hits, err := s.st.SearchStatements(ctx, datasetID, f.Query)
		if err != nil {
			return nil, err
		}
		lq := strings.ToLower(f.Query)
		for _, i := range order {
			row := &rep.Rows[i]
			if hits[row.ProblemID] || strings.Contains(strings.ToLower(row.Key), lq) {
				matched[row.ProblemID] = true
			}
		}
	}
	if f.In == "completions" || f.In == "both" {
		var runs []int64
		var texts []int
		for m, model := range rep.Models {
			if model.HasTexts {
				runs = append(runs, model.RunID)
				texts = append(texts, m)
			}
		}
		// The problems to search, in the table's order, with their
		// samples per run; those an earlier search of the same query
		// under this report decided are not searched again.
		known := searchResults(e, f.Query)
		var ts store.TextSearch
		sizes, inStatements := map[int64]int{}, 0
		for _, i := range order {
			row := &rep.Rows[i]
			if matched[row.ProblemID] {
				inStatements++
				continue // found in its statement already
			}
			n, counts := 0, make([]int, len(texts))
			for r, m := range texts {
				counts[r] = row.Counts[m].N
				n += counts[r]
			}
			sizes[row.ProblemID] = n
			if !known.isDecided(row.ProblemID) {
				ts.Problems, ts.Counts = append(ts.Problems, row.ProblemID), append(ts.Counts, counts)
			}
		}
		indexed, common, budget := false, false, completionSearchBudget
		if len(ts.Problems) > 0 && len(runs) > 0 {
			ready, err := s.st.SearchIndexedRuns(ctx, runs)
			if err != nil {
				return nil, err
			}
			ts.Runs, ts.Indexed, ts.Text, ts.Budget, ts.MaxCandidates = runs, ready, f.Query, completionSearchBudget, maxIndexCandidates
			if len(ready) == len(runs) && store.Trigrammable(f.Query) {
				if ts.Windows, err = s.windowsOf(ctx, runs); err != nil {
					return nil, err
				}
			}
			res, err := s.st.SearchTexts(ctx, ts)
			if err != nil {
				return nil, err
			}
			known.add(res)
			indexed, common = res.Indexed, res.Common
			if common {
				budget = res.Budget
			}
		}
		searched, samples, unsearched := 0, 0, 0
		for id, n := range sizes {
			hit, decided := known.get(id)
			if !decided {
				unsearched++
				continue
			}
			searched, samples = searched+1, samples+n
			if hit {
				matched[id] = true
			}
		}
		trigrams := store.Trigrammable(f.Query)
		*search = views.SearchInfo{Completions: true, Problems: searched, Samples: samples, InStatements: inStatements,
			Unsearched: unsearched, NoTexts: len(runs) == 0, Budget: budget,
			Indexed: indexed, Common: common && unsearched > 0, Building: unsearched > 0 && trigrams && !common, Short: unsearched > 0 && !trigrams}
	}
	keep(func(i int) bool { return matched[rep.Rows[i].ProblemID] })
	return order, nil
}

// previews reads the one-line statement previews of the page's rows.
func (s *Server) previews(ctx context.Context, rows []analysis.ProblemRow) (map[int64]string, error) {
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ProblemID
	}
	p, err := s.st.StatementPreviews(ctx, ids, previewChars)
	if err != nil {
		return nil, fmt.Errorf("problem table: %w", err)
	}
	return p, nil
}

// tableFilter reads the problem table's view from a query (the comparison
// page's, or the list a problem page was opened from).
func tableFilter(q url.Values, rep *analysis.Report, opt analysis.Options) views.ProblemFilter {
	f := views.ProblemFilter{Region: q.Get("region"), Subject: q.Get("subject"), Level: q.Get("level"), Pair: 1,
		Exclude: opt.ExcludeGuessable, Biased: opt.Biased, WithoutErrors: opt.ExcludeProblems != nil, MinN: rep.MinN}
	if p, err := strconv.Atoi(q.Get("pair")); err == nil && p >= 1 && p < len(rep.Models) {
		f.Pair = p
	}
	if r, ok := vennRegions[f.Region]; ok {
		f.Region = r
	}
	if _, ok := regionOrder[f.Region]; !ok {
		f.Region = ""
	}
	readTableQuery(q, len(rep.Models), &f)
	return f
}

// rowRegion is row i's solved-set region against model pair.
func rowRegion(rep *analysis.Report, pair, i int) string {
	if pair == 1 {
		return rep.Rows[i].Region
	}
	return regionOf(rep.Rows[i].Counts[0], rep.Rows[i].Counts[pair])
}

// tableOrder returns the rows (indices into the report's rows) of the
// table's view f, in its order: base-only first by region unless sorted.
func (s *Server) tableOrder(ctx context.Context, e *analysis.Entry, c store.Comparison, reviews map[int64]store.Review,
	f views.ProblemFilter, search *views.SearchInfo) ([]int, error) {
	rep := e.Report
	keep := func(i int) bool {
		row := &rep.Rows[i]
		return (f.Region == "" || rowRegion(rep, f.Pair, i) == f.Region) && (f.Subject == "" || row.Subject == f.Subject) &&
			(f.Level == "" || row.Level == f.Level)
	}
	var order []int
	if f.Sort == "" {
		var buckets [4][]int // matching rows by region, base-only first
		for i := range rep.Rows {
			if keep(i) {
				reg := rowRegion(rep, f.Pair, i)
				buckets[regionOrder[reg]] = append(buckets[regionOrder[reg]], i)
			}
		}
		order = slices.Concat(buckets[:]...)
	} else {
		// Every row sorted once per report version and column (the
		// report's rows are shared and never change), then filtered.
		key := fmt.Sprintf("order:%s:%v:%d", f.Sort, f.Desc, f.Pair)
		all, _ := e.Memo(key, func() (any, error) {
			o := make([]int, len(rep.Rows))
			for i := range o {
				o[i] = i
			}
			sortRows(rep.Rows, o, f)
			return o, nil
		})
		for _, i := range all.([]int) {
			if keep(i) {
				order = append(order, i)
			}
		}
	}
	var datasetID int64
	if c.DatasetID != nil {
		datasetID = *c.DatasetID
	}
	return s.tableRows(ctx, e, datasetID, reviews, f, order, search)
}

// listNeighbours places problem pid in the problem table's view list (the
// table's query, as its links pass it): j / k go to the list's next /
// previous problem, J / K to its next / previous unreviewed one. A problem
// the list does not hold keeps its solved-set neighbours.
func (s *Server) listNeighbours(ctx context.Context, c store.Comparison, pid int64, list string, reviews map[int64]store.Review, v *views.ProblemView) error {
	q, err := url.ParseQuery(list)
	if err != nil {
		return nil // a mangled list: the solved set's neighbours
	}
	opt, err := s.optionsFor(ctx, c.ID, q)
	var fe formError
	if errors.As(err, &fe) {
		return nil // a list's view no longer valid: the solved set's neighbours
	}
	if err != nil {
		return err
	}
	e, err := s.reports.Get(ctx, c.ID, opt)
	if err != nil {
		return err
	}
	rep := e.Report
	order, err := s.tableOrder(ctx, e, c, reviews, tableFilter(q, rep, opt), &views.SearchInfo{})
	if err != nil {
		return err
	}
	at := slices.IndexFunc(order, func(i int) bool { return rep.Rows[i].ProblemID == pid })
	if at < 0 {
		return nil
	}
	v.List, v.InList, v.ListPos, v.ListLen = list, true, at+1, len(order)
	v.Prev, v.Next, v.PrevOpen, v.NextOpen = 0, 0, 0, 0
	if at > 0 {
		v.Prev = rep.Rows[order[at-1]].ProblemID
	}
	if at+1 < len(order) {
		v.Next = rep.Rows[order[at+1]].ProblemID
	}
	open := func(i int) bool { _, done := reviews[rep.Rows[i].ProblemID]; return !done }
	for j := at - 1; j >= 0; j-- {
		if open(order[j]) {
			v.PrevOpen = rep.Rows[order[j]].ProblemID
			break
		}
	}
	for j := at + 1; j < len(order); j++ {
		if open(order[j]) {
			v.NextOpen = rep.Rows[order[j]].ProblemID
			break
		}
	}
	return nil
}
