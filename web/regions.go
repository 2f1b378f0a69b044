package web

import (
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

// regionSummary is what the comparison page shows of a report's solved
// sets against one pair, computed once per report and pair: a pass over
// every row, which at a million problems is what a request must not do
// (it copied each solved-set row, 38 MB a request; issue 30).
type regionSummary struct {
	regions             map[string]int // problems per region
	subjects, levels    []string       // the dataset's, sorted (levels by number)
	baseOnly, otherOnly []int64        // problem ids of the pair's base-only and other-only problems
}

func memoRegions(e *analysis.Entry, pair int) *regionSummary {
	v, _ := e.Memo(fmt.Sprintf("regions-vs-%d", pair), func() (any, error) {
		rep := e.Report
		rs := &regionSummary{regions: map[string]int{}}
		subjects, levels := map[string]bool{}, map[string]bool{}
		for i := range rep.Rows {
			row, reg := &rep.Rows[i], rowRegion(rep, pair, i)
			switch reg {
			case "base-only":
				rs.baseOnly = append(rs.baseOnly, row.ProblemID)
			case "other-only":
				rs.otherOnly = append(rs.otherOnly, row.ProblemID)
			}
			rs.regions[reg]++
			if row.Subject != "" {
				subjects[row.Subject] = true
			}
			if row.Level != "" {
				levels[row.Level] = true
			}
		}
		for s := range subjects {
			rs.subjects = append(rs.subjects, s)
		}
		for l := range levels {
			rs.levels = append(rs.levels, l)
		}
		slices.Sort(rs.subjects)
		slices.SortFunc(rs.levels, func(a, b string) int {
			ai, aerr := strconv.Atoi(a)
			bi, berr := strconv.Atoi(b)
			if aerr == nil && berr == nil {
				return ai - bi
			}
			return strings.Compare(a, b)
		})
		return rs, nil
	})
	return v.(*regionSummary)
}

// reviewSummaryOf and rlOnlySummaryOf count the review verdicts on a
// pair's base-only and other-only problems (ids from memoRegions).
func reviewSummaryOf(ids []int64, reviews map[int64]store.Review) views.ReviewSummary {
	counts, unreviewed := countReviewIDs(ids, reviews)
	return views.ReviewSummary{BaseOnly: len(ids), Counts: counts, Unreviewed: unreviewed}
}

func rlOnlySummaryOf(ids []int64, reviews map[int64]store.Review) views.RLOnlySummary {
	counts, unreviewed := countReviewIDs(ids, reviews)
	return views.RLOnlySummary{RLOnly: len(ids), Counts: counts, Unreviewed: unreviewed}
}

func countReviewIDs(ids []int64, reviews map[int64]store.Review) (counts map[string]int, unreviewed int) {
	counts = map[string]int{}
	for _, id := range ids {
		if rv, ok := reviews[id]; ok {
			counts[rv.Verdict]++
		} else {
			unreviewed++
		}
	}
	return counts, unreviewed
}

// problemIDs returns a lookup of a problem's id by its key in the report:
// a binary search over the rows' key hashes, each packed with its row
// number and sorted (8 bytes a problem, kept with the report), where a map
// took 56 MB at a million problems and a sort by the keys themselves 200 ms
// of the first view (this one 60 ms).
func problemIDs(e *analysis.Entry) func(key string) (int64, bool) {
	rep := e.Report
	const rowBits = 28 // analysis keeps fewer rows than 2^28
	const rowMask = 1<<rowBits - 1
	v, _ := e.Memo("rows-by-key-hash", func() (any, error) {
		if len(rep.Rows) > rowMask {
			return func(string) (int64, bool) { return 0, false }, nil // no links rather than wrong ones
		}
		seed := maphash.MakeSeed()
		idx := make([]uint64, len(rep.Rows))
		for i := range idx {
			idx[i] = maphash.String(seed, rep.Rows[i].Key)&^rowMask | uint64(i)
		}
		slices.Sort(idx)
		return func(key string) (int64, bool) {
			h := maphash.String(seed, key) &^ rowMask
			i, _ := slices.BinarySearch(idx, h)
			for ; i < len(idx) && idx[i]&^rowMask == h; i++ { // equal hashes: compare the keys
				if r := &rep.Rows[idx[i]&rowMask]; r.Key == key {
					return r.ProblemID, true
				}
			}
			return 0, false
		}, nil
	})
	return v.(func(string) (int64, bool))
}
