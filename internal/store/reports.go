package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// ReportVersion identifies the state of everything a comparison's report
// is computed from (see migration 00051): it changes with every committed
// change to the comparison's counts, quality figures, statistics, runs,
// fields or problems. One index-only lookup.
func (s *Store) ReportVersion(ctx context.Context, comparisonID int64) (string, error) {
	var v string
	err := s.Batch(ctx, s.ReportVersionInto(comparisonID, &v))
	return v, err
}

// ReportVersionInto queues ReportVersion's query with v as the result.
func (s *Store) ReportVersionInto(comparisonID int64, v *string) Queued {
	return func(b *pgx.Batch) {
		b.Queue(`SELECT count(*), COALESCE(max(id), 0) FROM report_changes WHERE comparison_id = $1`, comparisonID).
			QueryRow(func(row pgx.Row) error {
				var n, last int64
				if err := row.Scan(&n, &last); err != nil {
					return fmt.Errorf("report version of comparison %d: %w", comparisonID, err)
				}
				*v = fmt.Sprintf("%d.%d", n, last)
				return nil
			})
	}
}

// StoredReport is a computed report as kept in Postgres.
type StoredReport struct {
	Version string
	Data    []byte // the encoding is the analysis package's
	Seconds float64
}

// GetReport returns the stored report of a comparison's variant, or
// ErrNotFound.
func (s *Store) GetReport(ctx context.Context, comparisonID int64, variant string) (StoredReport, error) {
	var r StoredReport
	err := s.db.QueryRow(ctx, `SELECT version, data, seconds FROM comparison_reports WHERE comparison_id = $1 AND variant = $2`,
		comparisonID, variant).Scan(&r.Version, &r.Data, &r.Seconds)
	if errors.Is(err, pgx.ErrNoRows) {
		return r, fmt.Errorf("stored report of comparison %d (%s): %w", comparisonID, variant, ErrNotFound)
	}
	if err != nil {
		return r, fmt.Errorf("stored report of comparison %d (%s): %w", comparisonID, variant, err)
	}
	return r, nil
}

// PutReport stores (replaces) the report of a comparison's variant. A
// comparison deleted meanwhile is not an error: there is nothing to keep.
func (s *Store) PutReport(ctx context.Context, comparisonID int64, variant string, r StoredReport) error {
	_, err := s.db.Exec(ctx, `INSERT INTO comparison_reports (comparison_id, variant, version, data, seconds, computed_at)
		SELECT $1, $2, $3, $4, $5, now() WHERE EXISTS (SELECT 1 FROM comparisons WHERE id = $1)
		ON CONFLICT (comparison_id, variant) DO UPDATE SET version = EXCLUDED.version, data = EXCLUDED.data,
			seconds = EXCLUDED.seconds, computed_at = now()`, comparisonID, variant, r.Version, r.Data, r.Seconds)
	if err != nil {
		return fmt.Errorf("store report of comparison %d (%s): %w", comparisonID, variant, err)
	}
	return nil
}
