package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Dataset is a list of problems.
type Dataset struct {
	ID           int64
	Name         string
	SourceFile   string
	ProblemCount int
	CreatedAt    time.Time
}

// Problem is one dataset problem.
type Problem struct {
	ID        int64
	DatasetID int64
	Idx       int    // 0-based line in the dataset file
	Key       string // unique_id / id / qid / task_id, or Idx as text
	Statement string
	Reference string
	Subject   string
	Level     string
	Kind      string // math | code | choice
	Extra     map[string]string
}

// CreateDataset inserts an empty dataset and returns its id.
func (s *Store) CreateDataset(ctx context.Context, name, sourceFile string) (int64, error) {
	var id int64
	err := s.db.QueryRow(ctx, `INSERT INTO datasets (name, source_file) VALUES ($1, $2) RETURNING id`, name, sourceFile).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("create dataset %q: %w", name, err)
	}
	return id, nil
}

// InsertProblems copies a batch of problems into a dataset.
func (s *Store) InsertProblems(ctx context.Context, datasetID int64, ps []Problem) error {
	rows := make([][]any, len(ps))
	for i, p := range ps {
		extra, err := json.Marshal(p.Extra)
		if err != nil {
			return fmt.Errorf("encode extra fields of problem %s: %w", p.Key, err)
		}
		if p.Extra == nil {
			extra = []byte("{}")
		}
		rows[i] = []any{datasetID, p.Idx, p.Key, p.Statement, p.Reference, p.Subject, p.Level, p.Kind, string(extra)}
	}
	_, err := s.db.CopyFrom(ctx, pgx.Identifier{"problems"},
		[]string{"dataset_id", "idx", "key", "statement", "reference", "subject", "level", "kind", "extra"}, pgx.CopyFromRows(rows))
	if err != nil {
		return fmt.Errorf("insert problems into dataset %d: %w", datasetID, err)
	}
	return nil
}

// FinishDataset records the dataset's problem count.
func (s *Store) FinishDataset(ctx context.Context, datasetID int64) error {
	_, err := s.db.Exec(ctx, `UPDATE datasets SET problem_count = (SELECT count(*) FROM problems WHERE dataset_id = $1) WHERE id = $1`, datasetID)
	if err != nil {
		return fmt.Errorf("finish dataset %d: %w", datasetID, err)
	}
	return nil
}

// ListDatasets returns all datasets, newest first.
func (s *Store) ListDatasets(ctx context.Context) ([]Dataset, error) {
	rows, err := s.db.Query(ctx, `SELECT id, name, source_file, problem_count, created_at FROM datasets WHERE problem_count > 0 ORDER BY id DESC`)
	if err != nil {
		return nil, fmt.Errorf("list datasets: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Dataset, error) {
		var d Dataset
		err := row.Scan(&d.ID, &d.Name, &d.SourceFile, &d.ProblemCount, &d.CreatedAt)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("list datasets: %w", err)
	}
	return out, nil
}

// GetDataset returns one dataset or ErrNotFound.
func (s *Store) GetDataset(ctx context.Context, id int64) (Dataset, error) {
	d := Dataset{ID: id}
	err := s.db.QueryRow(ctx, `SELECT name, source_file, problem_count, created_at FROM datasets WHERE id = $1`, id).
		Scan(&d.Name, &d.SourceFile, &d.ProblemCount, &d.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return d, fmt.Errorf("dataset %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return d, fmt.Errorf("dataset %d: %w", id, err)
	}
	return d, nil
}

// Problems returns a dataset's problems in file order. With withText false
// the statement and extra fields are left empty (cheaper for tables).
func (s *Store) Problems(ctx context.Context, datasetID int64, withText bool) ([]Problem, error) {
	q := `SELECT id, dataset_id, idx, key, '', reference, subject, level, kind, '{}'::jsonb FROM problems WHERE dataset_id = $1 ORDER BY idx`
	if withText {
		q = `SELECT id, dataset_id, idx, key, statement, reference, subject, level, kind, extra FROM problems WHERE dataset_id = $1 ORDER BY idx`
	}
	rows, err := s.db.Query(ctx, q, datasetID)
	if err != nil {
		return nil, fmt.Errorf("problems of dataset %d: %w", datasetID, err)
	}
	out, err := pgx.CollectRows(rows, scanProblem)
	if err != nil {
		return nil, fmt.Errorf("problems of dataset %d: %w", datasetID, err)
	}
	return out, nil
}

func scanProblem(row pgx.CollectableRow) (Problem, error) {
	var p Problem
	err := row.Scan(&p.ID, &p.DatasetID, &p.Idx, &p.Key, &p.Statement, &p.Reference, &p.Subject, &p.Level, &p.Kind, &p.Extra)
	return p, err
}

// GetProblem returns one problem with its text, or ErrNotFound.
func (s *Store) GetProblem(ctx context.Context, id int64) (Problem, error) {
	rows, err := s.db.Query(ctx, `SELECT id, dataset_id, idx, key, statement, reference, subject, level, kind, extra FROM problems WHERE id = $1`, id)
	if err != nil {
		return Problem{}, fmt.Errorf("problem %d: %w", id, err)
	}
	p, err := pgx.CollectExactlyOneRow(rows, scanProblem)
	if errors.Is(err, pgx.ErrNoRows) {
		return p, fmt.Errorf("problem %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return p, fmt.Errorf("problem %d: %w", id, err)
	}
	return p, nil
}
