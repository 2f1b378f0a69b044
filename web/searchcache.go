package web

import (
	"context"
	"sync"
	"time"

	"github.com/maypok86/otter/v2"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/store"
)

// searchKnown is what the searches of one query in one report's
// completion texts found so far: the problems decided and, of those, the
// ones with a match. Any view of the query (a sort, a page, a solved set,
// a problem page's neighbours, another client) reads it and searches only
// the problems it lacks.
type searchKnown struct {
	mu   sync.Mutex
	hits map[int64]bool
	done map[int64]bool // decided
}

type searchKey struct {
	entry uint64
	query string
}

// searchCache holds the searchKnown of recent queries; an entry is at
// most two booleans per problem.
var searchCache = otter.Must(&otter.Options[searchKey, *searchKnown]{MaximumSize: 1024})

// searchResults is query's searchKnown under report e (the report's
// entry changes whenever the samples do).
func searchResults(e *analysis.Entry, query string) *searchKnown {
	k := searchKey{entry: uint64(e.ID), query: query}
	v, _ := searchCache.Compute(k, func(old *searchKnown, found bool) (*searchKnown, otter.ComputeOp) {
		if found {
			return old, otter.CancelOp
		}
		return &searchKnown{hits: map[int64]bool{}, done: map[int64]bool{}}, otter.WriteOp
	})
	return v
}

// get says whether problem id was decided and whether it matched.
func (k *searchKnown) get(id int64) (hit, decided bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.hits[id], k.done[id]
}

// isDecided says whether problem id was decided.
func (k *searchKnown) isDecided(id int64) bool {
	_, d := k.get(id)
	return d
}

// add records a search's result.
func (k *searchKnown) add(res store.TextSearchResult) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for id := range res.Decided {
		k.done[id] = true
		if res.Hits[id] {
			k.hits[id] = true
		}
	}
}

// searchSampleTexts is how many completions of a run (each problem's
// first) estimate its trigrams' frequencies (store.Windows).
const searchSampleTexts = 512

// runWindows keeps each run's store.Windows: estimates, so a stale one
// (samples added since) only picks less rare trigrams.
var runWindows = otter.Must(&otter.Options[int64, store.Windows]{MaximumSize: 256,
	ExpiryCalculator: otter.ExpiryWriting[int64, store.Windows](10 * time.Minute)})

// windowsOf returns the store.Windows of runs, read once per run.
func (s *Server) windowsOf(ctx context.Context, runs []int64) ([]store.Windows, error) {
	out := make([]store.Windows, len(runs))
	for i, r := range runs {
		w, err := runWindows.Get(ctx, r, otter.LoaderFunc[int64, store.Windows](func(ctx context.Context, r int64) (store.Windows, error) {
			texts, err := s.st.SearchSampleTexts(ctx, r, searchSampleTexts)
			if err != nil {
				return store.Windows{}, err
			}
			return store.CountWindows(texts), nil
		}))
		if err != nil {
			return nil, err
		}
		out[i] = w
	}
	return out, nil
}
