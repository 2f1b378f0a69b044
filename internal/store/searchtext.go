package store

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// TextSearch asks which problems have a completion that contains Text:
// case-insensitive and literal, that is lower(completion) contains
// lower(Text) as Postgres lower-cases them (what ILIKE with % and _
// escaped matches).
type TextSearch struct {
	Runs     []int64        // the runs with completion texts
	Indexed  map[int64]bool // those of Runs whose search index is ready (SearchIndexedRuns)
	Problems []int64        // the problems to search, in the table's order
	Counts   [][]int        // Counts[i][r]: samples of Problems[i] in Runs[r]
	Text     string
	// Windows, when set (one per run, or fewer), estimate how many
	// candidates the index would return (MaxCandidates).
	Windows []Windows
	// Budget bounds the samples read one by one when the index cannot
	// decide the rest (a run without index yet, a query without trigrams).
	Budget int
	// MaxCandidates, when set with Windows, bounds the index's work: a
	// query whose rarest windows are estimated (CandidateShare) to select
	// more of the undecided problems' samples than this is too common for
	// the index (each candidate's text is checked, 20-120 µs apiece) and
	// is read one by one within Budget instead, unless at most
	// SearchFilterProblems problems are left.
	MaxCandidates int
}

// TextSearchResult is what SearchTexts found.
type TextSearchResult struct {
	Hits    map[int64]bool // problems with a match
	Decided map[int64]bool // problems searched to the end (Hits included); the others were left at the budget
	Read    int            // samples read one by one (at most; the index's candidates not counted)
	Indexed bool           // the search index decided the problems the reading left
	// Common: the query was too common for the index (MaxCandidates), so
	// the problems the reading left are undecided; Candidates is the
	// index's work estimated then (samples).
	Common     bool
	Candidates int
	Budget     int // the bound on samples read one by one that applied
}

// Reading rounds: round k reads samples [roundEdges[k], roundEdges[k+1])
// of each undecided problem (the last round to the end), so that a common
// word is confirmed by a problem's first samples and a rare one is left
// to the index after a few.
var roundEdges = []int{0, 1, 4, 16, 64, 256, 1024}

// probeProblems is how many problems the first round reads, on the first
// run, before choosing between reading on and the index: a query found in
// a quarter of them is common (its trigrams select most samples, so the
// index would check nearly all of them) and is read on, problem by
// problem, stopping at each problem's first match; a rarer one goes to
// the index at once.
const probeProblems = 32

// SearchTexts answers q. Samples are read in rounds (each problem's
// samples by sample index, a round's reading of a problem stopping at its
// first match); when every run has its index and the query has trigrams
// (Trigrammable), the problems the rounds leave undecided are decided by
// one query per run through the index (every candidate checked: complete,
// whatever the budget). Otherwise the rounds go on until q.Budget samples
// are read and the problems left are reported undecided.
func (s *Store) SearchTexts(ctx context.Context, q TextSearch) (TextSearchResult, error) {
	res := TextSearchResult{Hits: map[int64]bool{}, Decided: map[int64]bool{}}
	if q.Text == "" || len(q.Runs) == 0 || len(q.Problems) == 0 {
		for _, p := range q.Problems {
			res.Decided[p] = true
		}
		return res, nil
	}
	useIndex := Trigrammable(q.Text)
	for _, r := range q.Runs {
		useIndex = useIndex && q.Indexed[r]
	}
	pattern := "%" + likeEscaper.Replace(q.Text) + "%"
	// undecided problems (indices into q.Problems), in the table's order.
	undecided := make([]int, len(q.Problems))
	for i := range undecided {
		undecided[i] = i
	}
	budget := q.Budget
	if useIndex {
		// The probe: the first sample of a few problems spread over the
		// list, on the first run.
		probe := undecided
		if len(probe) > probeProblems {
			probe = make([]int, probeProblems)
			for j := range probe {
				probe[j] = j * len(q.Problems) / probeProblems
			}
		}
		hits, read, err := s.readRound(ctx, q, 0, probe, 0, 1, pattern)
		if err != nil {
			return res, err
		}
		res.Read += read
		for _, i := range hits {
			res.Hits[q.Problems[i]], res.Decided[q.Problems[i]] = true, true
		}
		undecided = without(undecided, res.Decided, q.Problems)
		if est := q.candidates(undecided); q.MaxCandidates > 0 && est > q.MaxCandidates && len(undecided) > SearchFilterProblems {
			// Too common for the index: read within the budget, run by
			// run, and say what is left.
			useIndex, res.Common, res.Candidates = false, true, est
			budget = min(budget, commonBudget+4*len(q.Problems))
		} else if len(hits)*4 < len(probe) {
			budget = 0 // rare: the index decides every problem
		} else {
			// Common: read on, within a budget proportional to the
			// problems (a few samples each), then the index.
			budget = min(budget, 1000+2*len(q.Problems))
		}
	}
	// readRun reads samples [lo, hi) of run r for the undecided problems.
	readRun := func(r, lo, hi int) error {
		hits, read, err := s.readRound(ctx, q, r, undecided, lo, hi, pattern)
		if err != nil {
			return err
		}
		res.Read += read
		for _, i := range hits {
			res.Hits[q.Problems[i]], res.Decided[q.Problems[i]] = true, true
		}
		undecided = without(undecided, res.Decided, q.Problems)
		return nil
	}
	// The rounds, while the next fits the budget; without the index the
	// last one reads the first problems that fit to the end.
	for k := 0; len(undecided) > 0 && edge(k) < math.MaxInt32; k++ {
		lo, hi := edge(k), edge(k+1)
		cost := 0
		for _, i := range undecided {
			for r := range q.Runs {
				cost += max(0, min(q.Counts[i][r], hi)-lo)
			}
		}
		if res.Read+cost > budget {
			if useIndex {
				break
			}
			if res.Common {
				// A common query is found in most problems' first samples:
				// this round's runs that fit, then stop.
				for r := range q.Runs {
					c := 0
					for _, i := range undecided {
						c += max(0, min(q.Counts[i][r], hi)-lo)
					}
					if res.Read+c > budget {
						break
					}
					if err := readRun(r, lo, hi); err != nil {
						return res, err
					}
				}
				break
			}
			// The longest prefix of the undecided problems whose samples
			// from lo on fit, read to the end.
			left, n := budget-res.Read, 0
			for _, i := range undecided {
				c := 0
				for r := range q.Runs {
					c += max(0, q.Counts[i][r]-lo)
				}
				if c > left {
					break
				}
				left -= c
				n++
			}
			if n == 0 {
				break
			}
			undecided, hi = undecided[:n], math.MaxInt32
		}
		for r := range q.Runs {
			if err := readRun(r, lo, hi); err != nil {
				return res, err
			}
		}
		// Problems read to the end in every run are decided.
		for _, i := range undecided {
			end := true
			for r := range q.Runs {
				end = end && q.Counts[i][r] <= hi
			}
			if end {
				res.Decided[q.Problems[i]] = true
			}
		}
		undecided = without(undecided, res.Decided, q.Problems)
	}
	res.Budget = budget
	if useIndex && len(undecided) > 0 {
		ids := make([]int64, len(undecided))
		for j, i := range undecided {
			ids[j] = q.Problems[i]
		}
		var only []int64
		if len(ids) <= SearchFilterProblems {
			only = ids
		}
		hits, err := s.searchIndexed(ctx, q.Runs, q.Text, only)
		if err != nil {
			return res, err
		}
		for _, id := range ids {
			res.Decided[id] = true
			if hits[id] {
				res.Hits[id] = true
			}
		}
		res.Indexed = true
	}
	return res, nil
}

// candidates estimates how many samples of the problems idx (indices into
// q.Problems) the index would return for q.Text (CandidateShare of the
// runs' Windows); 0 without Windows.
func (q TextSearch) candidates(idx []int) int {
	if len(q.Windows) == 0 {
		return 0
	}
	share := CandidateShare(strings.ToLower(q.Text), q.Windows)
	n := 0
	for _, i := range idx {
		for _, c := range q.Counts[i] {
			n += c
		}
	}
	return int(share * float64(n))
}

// edge is round k's first sample index; the one past the last round is
// "to the end".
func edge(k int) int {
	if k >= len(roundEdges) {
		return math.MaxInt32
	}
	return roundEdges[k]
}

// without is list less the problems decided.
func without(list []int, decided map[int64]bool, problems []int64) []int {
	out := list[:0:0]
	for _, i := range list {
		if !decided[problems[i]] {
			out = append(out, i)
		}
	}
	return out
}

// readRound reads the samples [lo, hi) of run q.Runs[r] (by sample index;
// hi past a problem's count means to its end) of the problems idx (indices
// into q.Problems), stopping at each problem's first match, and returns
// the problems with a match and how many samples the round may have read.
func (s *Store) readRound(ctx context.Context, q TextSearch, r int, idx []int, lo, hi int, pattern string) ([]int, int, error) {
	var ids []int64
	var his []int32
	read := 0
	at := map[int64]int{}
	for _, i := range idx {
		n := q.Counts[i][r]
		if n <= lo {
			continue
		}
		h := hi
		if h >= n {
			h = math.MaxInt32 // any sample past the count too
		}
		ids, his = append(ids, q.Problems[i]), append(his, int32(h))
		at[q.Problems[i]] = i
		read += min(n, hi) - lo
	}
	if len(ids) == 0 {
		return nil, 0, nil
	}
	// Problem by problem, each stopping at its first match (a LATERAL
	// with LIMIT: an EXISTS became a semi-join, and for a common query
	// Postgres hashed the whole run's matching samples, reading every
	// text: 15 s for one 512,000-sample run against 0.12 s).
	rows, err := s.db.Query(ctx, `SELECT p.id FROM unnest($1::bigint[], $2::int[]) AS p(id, hi)
		CROSS JOIN LATERAL (SELECT 1 FROM samples s WHERE s.run_id = $3 AND s.problem_id = p.id
		              AND s.sample_index >= $4 AND s.sample_index < p.hi AND s.completion ILIKE $5 LIMIT 1) x`,
		ids, his, q.Runs[r], lo, pattern)
	if err != nil {
		return nil, 0, fmt.Errorf("search completions of run %d: %w", q.Runs[r], err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, 0, fmt.Errorf("search completions of run %d: %w", q.Runs[r], err)
	}
	out := make([]int, len(got))
	for j, id := range got {
		out[j] = at[id]
	}
	return out, read, nil
}

// commonBudget (plus 4 per problem) bounds the samples a query too common
// for the index reads: enough for each problem's first sample in a few
// runs, where a common query shows (about 100 ms on the 2-core machine).
const commonBudget = 2000

// SearchFilterProblems is the most problems the index query names: for a few
// problems the planner can intersect the index's candidates with theirs
// (samples_problem) before checking any ("answer 1" in 10 problems: 0.7
// ms, against 85 ms checking its 2,182 candidates in every problem); for
// many, reading their samples' ids costs more than the candidates.
const SearchFilterProblems = 16

// SearchTextSQL is the expression the search index holds (migration
// 00177): lower(completion) with spaces replaced by searchSpace.
const SearchTextSQL = "reach_search_text(completion)"

// searchSpace is the letter reach_search_text puts for a space.
const searchSpace = "ᐟ"

// searchIndexedSQL is one query over runs' search indexes: each run's
// part names its run id literally, so that the planner can prove its
// partial index's predicate. $1 is the query's LIKE pattern of
// reach_search_text, $2 its ILIKE pattern; $3, with only, the problems to
// search (SearchFilterProblems), else every problem of the runs. The
// index's condition is exact for texts without searchSpace and a query
// without it (exact); otherwise every candidate is checked with ILIKE.
func searchIndexedSQL(runs []int64, exact, only bool) string {
	check := `(strpos(completion, '` + searchSpace + `') = 0 OR completion ILIKE $2)`
	if !exact {
		check = `completion ILIKE $2`
	}
	parts := make([]string, len(runs))
	for i, r := range runs {
		parts[i] = `SELECT problem_id FROM samples WHERE run_id = ` + strconv.FormatInt(r, 10) + ` AND ` + SearchTextSQL + ` LIKE $1 AND ` + check
		if only {
			parts[i] += ` AND problem_id = ANY($3)`
		}
	}
	return strings.Join(parts, "\nUNION\n")
}

// searchArgs are searchIndexedSQL's arguments for text: the query's own
// LIKE pattern of reach_search_text (as Postgres lower-cases it), every
// trigram of it, and whether the index condition is exact (a query
// without searchSpace). Asking the index for every trigram rather than the
// rarest windows (as it did) was never slower on two 512,000-sample runs
// of the lab's real texts and up to 3.6 times faster: the posting lists of
// common trigrams cost less to read than the candidates they remove, each
// checked against its whole text (EXPLAIN ANALYZE, 10 queries, README
// "Searching completion texts").
func (s *Store) searchArgs(ctx context.Context, text string) ([]any, bool, error) {
	var p string
	err := s.db.QueryRow(ctx, `SELECT '%' || replace(replace(replace(reach_search_text($1), '\', '\\'), '%', '\%'), '_', '\_') || '%'`, text).Scan(&p)
	if err != nil {
		return nil, false, fmt.Errorf("search pattern: %w", err)
	}
	exact := !strings.Contains(text, searchSpace)
	return []any{pgx.QueryExecModeExec, p, "%" + likeEscaper.Replace(text) + "%"}, exact, nil
}

// searchIndexed returns the problems (of only, unless nil) with a
// completion of one of runs containing text, through the runs' search
// indexes. Planned with the patterns (an unnamed statement, never a
// generic plan).
func (s *Store) searchIndexed(ctx context.Context, runs []int64, text string, only []int64) (map[int64]bool, error) {
	args, exact, err := s.searchArgs(ctx, text)
	if err != nil {
		return nil, err
	}
	if only != nil {
		args = append(args, only)
	}
	rows, err := s.db.Query(ctx, searchIndexedSQL(runs, exact, only != nil), args...)
	if err != nil {
		return nil, fmt.Errorf("search completions through the index: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("search completions through the index: %w", err)
	}
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}

// ExplainSearchIndexed is Postgres's plan (EXPLAIN ANALYZE, text) of the
// index query of SearchTexts for runs and text:
// tests check that it reads the runs' indexes, the benchmark notes keep
// its numbers.
func (s *Store) ExplainSearchIndexed(ctx context.Context, runs []int64, text string) (string, error) {
	args, exact, err := s.searchArgs(ctx, text)
	if err != nil {
		return "", err
	}
	rows, err := s.db.Query(ctx, `EXPLAIN (ANALYZE, BUFFERS) `+searchIndexedSQL(runs, exact, false), args...)
	if err != nil {
		return "", fmt.Errorf("explain search: %w", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", fmt.Errorf("explain search: %w", err)
	}
	return strings.Join(lines, "\n"), nil
}
