package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Queued is a query waiting to be sent with others in one round trip
// (Batch). The constructors (the *Into methods) take where to put the
// result; it is there once Batch has returned nil.
type Queued func(b *pgx.Batch)

// Batch sends qs to Postgres in one round trip (a pgx pipeline) and reads
// their results in order. A page that needs ten small queries then waits
// for the database once instead of ten times: on a loaded machine each
// wait is a wake-up of the Postgres backend and of the caller. It returns
// the first query's error; the queries after it are not read.
func (s *Store) Batch(ctx context.Context, qs ...Queued) error {
	b := &pgx.Batch{}
	for _, q := range qs {
		q(b)
	}
	return s.db.SendBatch(ctx, b).Close()
}
