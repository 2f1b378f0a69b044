package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Collection is a named, ordered set of comparisons of one project, to
// compare runs across comparisons (issue 14).
type Collection struct {
	ID          int64
	ProjectID   int64
	ProjectName string
	Name        string
	CreatedAt   time.Time
	Comparisons int // how many comparisons it holds (CollectionsFor only)
}

// CreateCollection creates an empty collection in a project, made by
// userID, and returns its id.
func (s *Store) CreateCollection(ctx context.Context, projectID int64, name string, userID int64) (int64, error) {
	var id int64
	err := s.db.QueryRow(ctx, `INSERT INTO collections (project_id, name, created_by) VALUES ($1, $2, $3) RETURNING id`,
		projectID, name, nullID(userID)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("create collection %q in project %d: %w", name, projectID, err)
	}
	return id, nil
}

// GetCollection returns one collection, or ErrNotFound.
func (s *Store) GetCollection(ctx context.Context, id int64) (Collection, error) {
	c := Collection{ID: id}
	err := s.db.QueryRow(ctx, `SELECT k.project_id, p.name, k.name, k.created_at FROM collections k JOIN projects p ON p.id = k.project_id
		WHERE k.id = $1`, id).Scan(&c.ProjectID, &c.ProjectName, &c.Name, &c.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return c, fmt.Errorf("collection %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return c, fmt.Errorf("collection %d: %w", id, err)
	}
	return c, nil
}

// CollectionsFor lists the collections of the projects a user is a member
// of (every collection when all is set), newest first.
func (s *Store) CollectionsFor(ctx context.Context, userID int64, all bool) ([]Collection, error) {
	rows, err := s.db.Query(ctx, `SELECT k.id, k.project_id, p.name, k.name, k.created_at,
			(SELECT count(*) FROM collection_comparisons cc JOIN comparisons c ON c.id = cc.comparison_id
				WHERE cc.collection_id = k.id AND c.project_id = k.project_id)
		FROM collections k JOIN projects p ON p.id = k.project_id
		WHERE $2 OR EXISTS (SELECT 1 FROM project_members m WHERE m.project_id = k.project_id AND m.user_id = $1)
		ORDER BY k.id DESC`, userID, all)
	if err != nil {
		return nil, fmt.Errorf("collections of user %d: %w", userID, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Collection, error) {
		var c Collection
		err := r.Scan(&c.ID, &c.ProjectID, &c.ProjectName, &c.Name, &c.CreatedAt, &c.Comparisons)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("collections of user %d: %w", userID, err)
	}
	return out, nil
}

// CollectionComparisons returns the ids of a collection's comparisons in
// their order. Only comparisons still in the collection's project count, so
// a reader of the project reads every one.
func (s *Store) CollectionComparisons(ctx context.Context, collectionID int64) ([]int64, error) {
	rows, err := s.db.Query(ctx, `SELECT cc.comparison_id FROM collection_comparisons cc
		JOIN collections k ON k.id = cc.collection_id JOIN comparisons c ON c.id = cc.comparison_id
		WHERE cc.collection_id = $1 AND c.project_id = k.project_id ORDER BY cc.position, cc.comparison_id`, collectionID)
	if err != nil {
		return nil, fmt.Errorf("comparisons of collection %d: %w", collectionID, err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("comparisons of collection %d: %w", collectionID, err)
	}
	return ids, nil
}

// AddToCollection appends a comparison to a collection (a comparison
// already there stays where it is). A comparison of another project than
// the collection's, or an unknown one, gives ErrNotFound.
func (s *Store) AddToCollection(ctx context.Context, collectionID, comparisonID int64) error {
	tag, err := s.db.Exec(ctx, `INSERT INTO collection_comparisons (collection_id, comparison_id, position)
		SELECT k.id, c.id, COALESCE((SELECT max(position) + 1 FROM collection_comparisons WHERE collection_id = k.id), 0)
		FROM collections k JOIN comparisons c ON c.project_id = k.project_id
		WHERE k.id = $1 AND c.id = $2
		ON CONFLICT (collection_id, comparison_id) DO UPDATE SET position = collection_comparisons.position`, collectionID, comparisonID)
	if err != nil {
		return fmt.Errorf("add comparison %d to collection %d: %w", comparisonID, collectionID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("comparison %d in the project of collection %d: %w", comparisonID, collectionID, ErrNotFound)
	}
	return nil
}

// RemoveFromCollection drops a comparison from a collection; one that is
// not in it gives ErrNotFound.
func (s *Store) RemoveFromCollection(ctx context.Context, collectionID, comparisonID int64) error {
	tag, err := s.db.Exec(ctx, `DELETE FROM collection_comparisons WHERE collection_id = $1 AND comparison_id = $2`, collectionID, comparisonID)
	if err != nil {
		return fmt.Errorf("remove comparison %d from collection %d: %w", comparisonID, collectionID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("comparison %d in collection %d: %w", comparisonID, collectionID, ErrNotFound)
	}
	return nil
}

// RenameCollection renames a collection; an unknown one gives ErrNotFound.
func (s *Store) RenameCollection(ctx context.Context, id int64, name string) error {
	tag, err := s.db.Exec(ctx, `UPDATE collections SET name = $2 WHERE id = $1`, id, name)
	if err != nil {
		return fmt.Errorf("rename collection %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("collection %d: %w", id, ErrNotFound)
	}
	return nil
}

// DeleteCollection deletes a collection and its share links; its
// comparisons stay. An unknown one gives ErrNotFound.
func (s *Store) DeleteCollection(ctx context.Context, id int64) error {
	tag, err := s.db.Exec(ctx, `DELETE FROM collections WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("delete collection %d: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("collection %d: %w", id, ErrNotFound)
	}
	return nil
}

// MoveInCollection moves a comparison one place up (delta -1) or down
// (delta +1) in its collection's order, swapping it with its neighbour
// among the comparisons still in the collection's project. At either end
// it stays. A comparison not in the collection gives ErrNotFound.
func (s *Store) MoveInCollection(ctx context.Context, collectionID, comparisonID int64, delta int) error {
	if delta != -1 && delta != 1 {
		return fmt.Errorf("move comparison %d in collection %d by %d: only one place up or down", comparisonID, collectionID, delta)
	}
	return s.WithTx(ctx, func(tx *Store) error {
		// Lock the collection's rows so two moves at once cannot interleave.
		if _, err := tx.db.Exec(ctx, `SELECT 1 FROM collection_comparisons WHERE collection_id = $1 FOR UPDATE`, collectionID); err != nil {
			return fmt.Errorf("move in collection %d: %w", collectionID, err)
		}
		ids, err := tx.CollectionComparisons(ctx, collectionID)
		if err != nil {
			return err
		}
		at := -1
		for i, id := range ids {
			if id == comparisonID {
				at = i
			}
		}
		if at < 0 {
			return fmt.Errorf("comparison %d in collection %d: %w", comparisonID, collectionID, ErrNotFound)
		}
		to := at + delta
		if to < 0 || to >= len(ids) {
			return nil
		}
		ids[at], ids[to] = ids[to], ids[at]
		// Renumber every position: old rows may share positions or have gaps.
		_, err = tx.db.Exec(ctx, `UPDATE collection_comparisons cc SET position = o.pos - 1
			FROM unnest($2::bigint[]) WITH ORDINALITY AS o(id, pos)
			WHERE cc.collection_id = $1 AND cc.comparison_id = o.id`, collectionID, ids)
		if err != nil {
			return fmt.Errorf("move comparison %d in collection %d: %w", comparisonID, collectionID, err)
		}
		return nil
	})
}
