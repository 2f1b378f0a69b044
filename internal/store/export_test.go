package store

import "context"

// SetDeleteBatch sets how many samples a transaction of DeleteComparison
// deletes, for a test, and returns what restores it.
func SetDeleteBatch(n int) (restore func()) {
	old := deleteBatch
	deleteBatch = n
	return func() { deleteBatch = old }
}

// DeleteSamplesInBatches is DeleteComparison's first step alone.
func (s *Store) DeleteSamplesInBatches(ctx context.Context, id int64) error {
	return s.deleteSamplesInBatches(ctx, id)
}
