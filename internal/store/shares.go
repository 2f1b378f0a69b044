package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ShareLink is a read-only link to a comparison's charts, or to a
// collection's overlay and table. Its token is never stored, only the
// token's SHA-256.
type ShareLink struct {
	ID           int64
	ComparisonID int64  // 0 for a collection's link
	CollectionID int64  // 0 for a comparison's link
	Label        string // what its owners call it ("for the workshop"); may be empty
	Chart        string // "" = every chart; crossover | venn | histogram
	ShowTexts    bool   // problem statements and completions visible
	ShowNotes    bool   // the comparison's notes visible
	// View is the report view the link shows, as a query string of the
	// comparison page's view options (exclude=guessable, estimator=biased,
	// min_n=N, without=grading-errors); "" is the default view.
	View         string
	CreatedBy    int64
	CreatedByEm  string
	CreatedAt    time.Time
	ExpiresAt    *time.Time
	RevokedAt    *time.Time
	Views        int64
	LastViewedAt *time.Time
	// CreatorGone says why the link's creator no longer manages its
	// project ("disabled", "left the project", "no longer an owner"; ""
	// while they do, or when unknown). Such links stay live: they belong
	// to the project, and its owners see and may revoke them like any other.
	CreatorGone string
}

// Live reports whether the link still opens at time now.
func (l ShareLink) Live(now time.Time) bool {
	return l.RevokedAt == nil && (l.ExpiresAt == nil || now.Before(*l.ExpiresAt))
}

// CreateShare stores a share link under its token's hash and returns its
// id. Exactly one of l.ComparisonID and l.CollectionID is set.
func (s *Store) CreateShare(ctx context.Context, l ShareLink, tokenHash []byte) (int64, error) {
	var id int64
	err := s.db.QueryRow(ctx, `INSERT INTO share_links (comparison_id, collection_id, token_hash, label, chart, show_texts, show_notes,
			created_by, expires_at, view)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`, nullID(l.ComparisonID), nullID(l.CollectionID), tokenHash, l.Label,
		l.Chart, l.ShowTexts, l.ShowNotes, nullID(l.CreatedBy), l.ExpiresAt, l.View).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("create share link of comparison %d / collection %d: %w", l.ComparisonID, l.CollectionID, err)
	}
	return id, nil
}

// shareColumns are a link l's columns, with its creator u (LEFT JOIN users
// u ON u.id = l.created_by); the last says whether u still manages the
// link's project (see ShareLink.CreatorGone).
const shareColumns = `l.id, COALESCE(l.comparison_id, 0), COALESCE(l.collection_id, 0), l.label, l.chart, l.show_texts, l.show_notes, l.view,
	COALESCE(l.created_by, 0), COALESCE(u.email, ''), l.created_at, l.expires_at, l.revoked_at, l.views, l.last_viewed_at,
	CASE
		WHEN u.id IS NULL OR u.is_admin AND NOT u.disabled THEN ''
		WHEN u.disabled THEN 'disabled'
		ELSE COALESCE((SELECT CASE WHEN m.role = 'owner' THEN '' ELSE 'no longer an owner' END FROM project_members m
			WHERE m.user_id = u.id AND m.project_id = COALESCE((SELECT c.project_id FROM comparisons c WHERE c.id = l.comparison_id),
				(SELECT k.project_id FROM collections k WHERE k.id = l.collection_id))), 'left the project')
	END`

func scanShare(row pgx.Row) (ShareLink, error) {
	var l ShareLink
	err := row.Scan(&l.ID, &l.ComparisonID, &l.CollectionID, &l.Label, &l.Chart, &l.ShowTexts, &l.ShowNotes, &l.View, &l.CreatedBy, &l.CreatedByEm,
		&l.CreatedAt, &l.ExpiresAt, &l.RevokedAt, &l.Views, &l.LastViewedAt, &l.CreatorGone)
	return l, err
}

// OpenShare returns the live share link with that token hash and, when
// view is set, counts one view. Unknown, revoked and expired links all give
// ErrNotFound.
func (s *Store) OpenShare(ctx context.Context, tokenHash []byte, view bool) (ShareLink, error) {
	q := `SELECT ` + shareColumns + ` FROM share_links l LEFT JOIN users u ON u.id = l.created_by
		WHERE l.token_hash = $1 AND l.revoked_at IS NULL AND (l.expires_at IS NULL OR l.expires_at > now())`
	if view {
		q = `WITH l AS (UPDATE share_links SET views = views + 1, last_viewed_at = now()
				WHERE token_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()) RETURNING *)
			SELECT ` + shareColumns + ` FROM l LEFT JOIN users u ON u.id = l.created_by`
	}
	l, err := scanShare(s.db.QueryRow(ctx, q, tokenHash))
	if errors.Is(err, pgx.ErrNoRows) {
		return l, fmt.Errorf("share link: %w", ErrNotFound)
	}
	if err != nil {
		return l, fmt.Errorf("share link: %w", err)
	}
	return l, nil
}

// GetShare returns a share link by id (live or not), or ErrNotFound.
func (s *Store) GetShare(ctx context.Context, id int64) (ShareLink, error) {
	l, err := scanShare(s.db.QueryRow(ctx, `SELECT `+shareColumns+` FROM share_links l LEFT JOIN users u ON u.id = l.created_by WHERE l.id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return l, fmt.Errorf("share link %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return l, fmt.Errorf("share link %d: %w", id, err)
	}
	return l, nil
}

// ListShares returns a comparison's share links, newest first.
func (s *Store) ListShares(ctx context.Context, comparisonID int64) ([]ShareLink, error) {
	return s.listShares(ctx, "comparison", comparisonID)
}

// ListCollectionShares returns a collection's share links, newest first.
func (s *Store) ListCollectionShares(ctx context.Context, collectionID int64) ([]ShareLink, error) {
	return s.listShares(ctx, "collection", collectionID)
}

// listShares lists the links of what ("comparison" or "collection", a
// constant: it names the column) id.
func (s *Store) listShares(ctx context.Context, what string, id int64) ([]ShareLink, error) {
	rows, err := s.db.Query(ctx, `SELECT `+shareColumns+` FROM share_links l LEFT JOIN users u ON u.id = l.created_by
		WHERE l.`+what+`_id = $1 ORDER BY l.id DESC`, id)
	if err != nil {
		return nil, fmt.Errorf("share links of %s %d: %w", what, id, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ShareLink, error) { return scanShare(r) })
	if err != nil {
		return nil, fmt.Errorf("share links of %s %d: %w", what, id, err)
	}
	return out, nil
}

// RevokeShare revokes a share link (revoking twice keeps the first time).
func (s *Store) RevokeShare(ctx context.Context, id int64) error {
	tag, err := s.db.Exec(ctx, `UPDATE share_links SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("revoke share link %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("share link %d: %w", id, ErrNotFound)
	}
	return nil
}
