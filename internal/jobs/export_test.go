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
