package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5"
)

// Windows says, of a sample of a run's completions lower-cased by
// Postgres, in how many each 3-character window of letters, digits and
// spaces occurs: an estimate of how many samples each trigram of a query
// selects in the run's search index (SearchTexts reads the index for the
// query's rarest ones only: the posting lists of trigrams every text has
// cost more to read than the candidates they remove).
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

// maxWindows is how many windows of a query the index is asked for.
const maxWindows = 3

// rareWindows picks, in lq (the query lower-cased by Postgres), up to
// maxWindows windows that do not overlap, the rarest in ws first (summed
// over the runs, as shares of each sample), and returns them in the
// query's order: a text that contains lq contains them, in that order.
// A window in more than a quarter of the sampled texts is left out unless
// no rarer one is there. None when lq has no window.
func rareWindows(lq string, ws []Windows) []string {
	rs := []rune(lq)
	type cand struct {
		at    int
		share float64
	}
	var cs []cand
	for i := 0; i+3 <= len(rs); i++ {
		if !windowRune(rs[i]) || !windowRune(rs[i+1]) || !windowRune(rs[i+2]) {
			continue
		}
		share := 0.0
		for _, w := range ws {
			if w.Texts > 0 {
				share += float64(w.Counts[string(rs[i:i+3])]) / float64(w.Texts)
			}
		}
		cs = append(cs, cand{i, share / float64(max(1, len(ws)))})
	}
	if len(cs) == 0 {
		return nil
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		switch {
		case a.share < b.share:
			return -1
		case a.share > b.share:
			return 1
		}
		return 0
	})
	var picked []int
	for _, c := range cs {
		if len(picked) == maxWindows || len(picked) > 0 && c.share > 0.25 {
			break
		}
		if !slices.ContainsFunc(picked, func(at int) bool { return at > c.at-3 && at < c.at+3 }) {
			picked = append(picked, c.at)
		}
	}
	slices.Sort(picked)
	out := make([]string, len(picked))
	for i, at := range picked {
		out[i] = string(rs[at : at+3])
	}
	return out
}

// windowsPattern is the LIKE pattern of reach_search_text for windows in
// order ("%wᐟ1%123%"); windows hold letters, digits and spaces only, so
// nothing needs escaping.
func windowsPattern(windows []string) string {
	return "%" + strings.ReplaceAll(strings.Join(windows, "%"), " ", searchSpace) + "%"
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
