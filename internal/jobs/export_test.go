package jobs

import (
	"context"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// SetImportHook makes every import of a run call hook, in the goroutine
// that owns its transaction, before it reads its file (stored = 0) and
// after each batch it stored, until the test ends.
func SetImportHook(t testing.TB, hook func(ctx context.Context, runID int64, tx *store.Store, stored int64)) {
	importHook.Store(&hook)
	t.Cleanup(func() { importHook.Store(nil) })
}

// SetMultiWriterBytes sets the file size from which a whole import COPYs
// over several transactions, until the test ends.
func SetMultiWriterBytes(t testing.TB, n int64) {
	old := multiWriterBytes
	multiWriterBytes = n
	t.Cleanup(func() { multiWriterBytes = old })
}
