package store

import (
	"context"
	"fmt"
	"slices"
	"unicode"

	"github.com/jackc/pgx/v5"
)

// Windows says, of a sample of a run's completions lower-cased by
// Postgres, in how many each 3-character window of letters, digits and
// spaces occurs: an estimate of how many samples each trigram of a query
// selects in the run's search index, from which SearchTexts estimates a
// query's candidates (CandidateShare) before asking the index.
type Windows struct {
	Texts  int
	Counts map[string]int32
}

// windowRune is a character of the windows: pg_trgm's word characters
// (letters, digits) and the space reach_search_text makes a letter.
func windowRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == ' ' }

// CountWindows counts the windows of texts (each counted once per text).
func CountWindows(texts []string) Windows {
	w := Windows{Texts: len(texts), Counts: map[string]int32{}}
	seen := map[string]bool{}
	for _, t := range texts {
		clear(seen)
		rs := []rune(t)
		for i := 0; i+3 <= len(rs); i++ {
			if windowRune(rs[i]) && windowRune(rs[i+1]) && windowRune(rs[i+2]) {
				k := string(rs[i : i+3])
				if !seen[k] {
					seen[k] = true
					w.Counts[k]++
				}
			}
		}
	}
	return w
}

// maxWindows is how many windows of a query the estimate multiplies.
const maxWindows = 6

// commonShare is the share of texts above which a window is common: the
// estimate leaves it out unless every window is common.
const commonShare = 0.25

// rareWindows returns the parts of lq (the query lower-cased by Postgres)
// CandidateShare multiplies, in the query's order: runs of consecutive rare
// windows (3 characters of letters, digits and spaces in at most
// commonShare of the sampled texts of ws, on average over the runs),
// rarest first up to maxWindows windows; when every window is common, the
// rarest one alone. A text that contains lq contains them, in that order.
// None when lq has no window.
func rareWindows(lq string, ws []Windows) []string {
	rs := []rune(lq)
	share := make([]float64, len(rs)) // of the window starting at i; -1: none
	any := false
	for i := range rs {
		share[i] = -1
		if i+3 > len(rs) || !windowRune(rs[i]) || !windowRune(rs[i+1]) || !windowRune(rs[i+2]) {
			continue
		}
		sh := 0.0
		for _, w := range ws {
			if w.Texts > 0 {
				sh += float64(w.Counts[string(rs[i:i+3])]) / float64(w.Texts)
			}
		}
		share[i], any = sh/float64(max(1, len(ws))), true
	}
	if !any {
		return nil
	}
	// Runs of rare windows: [from, to) of window starts.
	type part struct {
		from, to int
		min      float64
	}
	var parts []part
	for i := 0; i < len(rs); i++ {
		if share[i] < 0 || share[i] > commonShare {
			continue
		}
		p := part{from: i, min: share[i]}
		for i < len(rs) && share[i] >= 0 && share[i] <= commonShare {
			p.min = min(p.min, share[i])
			i++
		}
		p.to = i
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		best := -1
		for i, sh := range share {
			if sh >= 0 && (best < 0 || sh < share[best]) {
				best = i
			}
		}
		return []string{string(rs[best : best+3])}
	}
	slices.SortStableFunc(parts, func(a, b part) int {
		switch {
		case a.min < b.min:
			return -1
		case a.min > b.min:
			return 1
		}
		return 0
	})
	var picked []part
	n := 0
	for _, p := range parts {
		if n > 0 && n+p.to-p.from > maxWindows {
			continue
		}
		picked, n = append(picked, p), n+p.to-p.from
	}
	slices.SortFunc(picked, func(a, b part) int { return a.from - b.from })
	out := make([]string, len(picked))
	for i, p := range picked {
		out[i] = string(rs[p.from : p.to+2])
	}
	return out
}

// CandidateShare estimates the share of the runs' texts the search index
// returns for lq (the query lower-cased): the product of the shares of its
// rarest windows (rareWindows), averaged over ws, as if they were
// independent. Windows of one text go together, so the product is low:
// a query that is too common by this estimate is too common. (The index
// is asked for every trigram; leaving the common ones out of the product
// errs the other way, high, by at most their shares.) 1 when lq has no
// window.
func CandidateShare(lq string, ws []Windows) float64 {
	share := 1.0
	for _, part := range rareWindows(lq, ws) {
		rs := []rune(part)
		for i := 0; i+3 <= len(rs); i++ {
			sh := 0.0
			for _, w := range ws {
				if w.Texts > 0 {
					sh += float64(w.Counts[string(rs[i:i+3])]) / float64(w.Texts)
				}
			}
			share *= sh / float64(max(1, len(ws)))
		}
	}
	return share
}

// SearchSampleTexts returns up to n completions of run runID, lower-cased
// by Postgres: each problem's first sample, for Windows.
func (s *Store) SearchSampleTexts(ctx context.Context, runID int64, n int) ([]string, error) {
	rows, err := s.db.Query(ctx, `SELECT lower(completion) FROM samples WHERE run_id = $1 AND sample_index = 0 LIMIT $2`, runID, n)
	if err != nil {
		return nil, fmt.Errorf("sample texts of run %d: %w", runID, err)
	}
	texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("sample texts of run %d: %w", runID, err)
	}
	return texts, nil
}
