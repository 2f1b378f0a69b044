package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// MaxNoteBytes is the largest note on a comparison, in bytes of UTF-8 (the
// table's check says the same).
const MaxNoteBytes = 64 << 10

// Note is the team's markdown note on a comparison. A comparison without
// one has the zero Note (empty Body).
type Note struct {
	ComparisonID int64
	Body         string // markdown as written; render it sanitised
	UpdatedBy    int64
	UpdatedByEm  string
	UpdatedAt    time.Time
}

// GetNote returns a comparison's note; one never written is the zero Note
// with ComparisonID set, not an error.
func (s *Store) GetNote(ctx context.Context, comparisonID int64) (Note, error) {
	var n Note
	err := s.Batch(ctx, s.NoteInto(comparisonID, &n))
	return n, err
}

// NoteInto queues GetNote's query with n as the result (Batch).
func (s *Store) NoteInto(comparisonID int64, n *Note) Queued {
	return func(b *pgx.Batch) {
		*n = Note{ComparisonID: comparisonID}
		b.Queue(`SELECT n.body, COALESCE(n.updated_by, 0), COALESCE(u.email, ''), n.updated_at
		FROM comparison_notes n LEFT JOIN users u ON u.id = n.updated_by WHERE n.comparison_id = $1`, comparisonID).
			QueryRow(func(row pgx.Row) error {
				err := row.Scan(&n.Body, &n.UpdatedBy, &n.UpdatedByEm, &n.UpdatedAt)
				if errors.Is(err, pgx.ErrNoRows) {
					return nil
				}
				if err != nil {
					return fmt.Errorf("note of comparison %d: %w", comparisonID, err)
				}
				return nil
			})
	}
}

// SetNote replaces a comparison's note with body (userID wrote it) and
// records the change in the audit log with the sizes before and after, in
// one transaction. An empty body deletes the note. A body over
// MaxNoteBytes is refused by the database.
func (s *Store) SetNote(ctx context.Context, comparisonID int64, body string, userID int64) error {
	return s.WithTx(ctx, func(tx *Store) error {
		var old string
		err := tx.db.QueryRow(ctx, `SELECT body FROM comparison_notes WHERE comparison_id = $1 FOR UPDATE`, comparisonID).Scan(&old)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("note of comparison %d: %w", comparisonID, err)
		}
		if old == body {
			return nil // nothing changed: no audit entry either
		}
		if body == "" {
			_, err = tx.db.Exec(ctx, `DELETE FROM comparison_notes WHERE comparison_id = $1`, comparisonID)
		} else {
			_, err = tx.db.Exec(ctx, `INSERT INTO comparison_notes (comparison_id, body, updated_by, updated_at) VALUES ($1, $2, $3, now())
				ON CONFLICT (comparison_id) DO UPDATE SET body = EXCLUDED.body, updated_by = EXCLUDED.updated_by, updated_at = now()`,
				comparisonID, body, nullID(userID))
		}
		if err != nil {
			return fmt.Errorf("note of comparison %d: %w", comparisonID, err)
		}
		return tx.AddAudit(ctx, AuditEntry{UserID: userID, ComparisonID: comparisonID, Action: "note", Target: "notes",
			Old: noteSummary(old), New: noteSummary(body)})
	})
}

// noteSummary is how the audit log names a note's version: its size and
// first line, not the whole text (up to 64 KiB).
func noteSummary(body string) string {
	if body == "" {
		return "(none)"
	}
	first := body
	for i, r := range body {
		if r == '\n' {
			first = body[:i]
			break
		}
	}
	if rs := []rune(first); len(rs) > 80 {
		first = string(rs[:80]) + "…"
	}
	return fmt.Sprintf("%d bytes: %s", len(body), first)
}
