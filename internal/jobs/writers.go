package jobs

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/reach-lab/reach/internal/store"
)

// multiWriterBytes is the file size from which a whole import COPYs over
// several transactions at once (importWriters): below it one COPY stream
// keeps up. A variable so that tests can lower it.
var multiWriterBytes int64 = 64 << 20

// importWriters COPYs one file's samples over n transactions at once: the
// import's own (tx, used only by the goroutine that owns it, as every
// statement of the import is) and n-1 more, each on its own connection
// with a goroutine of its own. One COPY stream is one Postgres backend,
// one core; a large file imported whole was bound by it (49 % of raw
// COPY's speed on 2 cores).
//
// Each sample goes to the writer of its problem (problem id mod n), so a
// sample repeated in the file meets its twin in the same transaction and
// fails there at once (samplePipeline.explain names the line), rather than
// waiting on another writer's uncommitted row; and no two transactions
// lock the same problem rows for their foreign keys. The further writers
// commit once the whole file is stored (commit), just before the import's
// own transaction: a failure before that keeps nothing, and one between
// the two leaves rows that failImport, or the next attempt's ClearRun,
// deletes.
type importWriters struct {
	tx      *store.Store
	explain func(error, *batch) error
	more    []*writer
	failed  chan struct{} // closed at a further writer's first error
	once    sync.Once
	mu      sync.Mutex
	err     error
	wg      sync.WaitGroup
}

type writer struct {
	st *store.Store
	in chan *batch
}

// newImportWriters opens n-1 transactions beside tx through st's pool
// (n < 2: none). The caller must call close and then rollback, and commit
// on success.
func newImportWriters(ctx context.Context, st, tx *store.Store, n int, explain func(error, *batch) error) (*importWriters, error) {
	w := &importWriters{tx: tx, explain: explain, failed: make(chan struct{})}
	for range n - 1 {
		wst, err := st.Begin(ctx)
		if err != nil {
			_ = w.close()
			w.rollback(ctx)
			return nil, fmt.Errorf("open a further COPY stream: %w", err)
		}
		wr := &writer{st: wst, in: make(chan *batch, 1)}
		w.more = append(w.more, wr)
		w.wg.Go(func() {
			for b := range wr.in {
				if w.firstErr() != nil {
					continue // drain: the import is failing
				}
				if err := wr.st.InsertSamples(ctx, b.samples); err != nil {
					w.fail(w.explain(err, b))
				}
			}
		})
	}
	return w, nil
}

func (w *importWriters) fail(err error) {
	w.mu.Lock()
	if w.err == nil {
		w.err = err
	}
	w.mu.Unlock()
	w.once.Do(func() { close(w.failed) })
}

func (w *importWriters) firstErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// write stores batch b: each further writer's share is handed to its
// goroutine (waiting while it still copies its previous share, so memory
// stays at a batch or two per writer), and the import's own share is
// copied here, on tx.
func (w *importWriters) write(ctx context.Context, b *batch) error {
	if len(w.more) == 0 {
		return w.tx.InsertSamples(ctx, b.samples)
	}
	n := int64(len(w.more) + 1)
	parts := make([]*batch, n)
	for i := range parts {
		parts[i] = &batch{}
	}
	for i, s := range b.samples {
		p := parts[s.ProblemID%n]
		p.samples = append(p.samples, s)
		p.lines = append(p.lines, b.lines[i])
	}
	for i, wr := range w.more {
		if len(parts[i+1].samples) == 0 {
			continue
		}
		select {
		case wr.in <- parts[i+1]:
		case <-w.failed:
			return w.firstErr()
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	if len(parts[0].samples) > 0 {
		if err := w.tx.InsertSamples(ctx, parts[0].samples); err != nil {
			return w.explain(err, parts[0])
		}
	}
	return w.firstErr()
}

// close waits for the further writers to store what they were given and
// returns the first error of any.
func (w *importWriters) close() error {
	for _, wr := range w.more {
		close(wr.in)
	}
	w.wg.Wait()
	return w.firstErr()
}

// commit commits the further writers' transactions (after close).
func (w *importWriters) commit(ctx context.Context) error {
	var errs []error
	for _, wr := range w.more {
		if err := wr.st.Commit(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// rollback ends the further writers' transactions that did not commit.
func (w *importWriters) rollback(ctx context.Context) {
	for _, wr := range w.more {
		wr.st.Rollback(ctx)
	}
}
