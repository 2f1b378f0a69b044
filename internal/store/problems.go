package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	// ContentHash is ingest.DatasetHash of the problems (nil for a
	// dataset written without it, such as benchmark data).
	ContentHash []byte
	// Copies is how many other datasets of the same content the list
	// folded into this one (ListDatasetsFor only).
	Copies int
	// Projects names the projects the dataset belongs to that the asking
	// user can read (ListDatasetsFor only).
	Projects []string
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

// SetDatasetHash records a dataset's content hash (ingest.DatasetHash).
func (s *Store) SetDatasetHash(ctx context.Context, datasetID int64, contentHash []byte) error {
	if _, err := s.db.Exec(ctx, `UPDATE datasets SET content_hash = $2 WHERE id = $1`, datasetID, contentHash); err != nil {
		return fmt.Errorf("record the content hash of dataset %d: %w", datasetID, err)
	}
	return nil
}

// SameDatasetIn returns the oldest loaded dataset of a project whose
// content hash is contentHash, other than except (0 when there is none).
// Called inside a transaction, it first takes a transaction lock on the
// hash, so that two imports of one content in flight at once do not both
// miss each other: the second waits for the first to commit, then finds
// its dataset. The dataset found is locked against deletion (FOR KEY
// SHARE) until the transaction ends. A dataset only failed comparisons use
// is not offered: it is about to go with them (DropFailedDataset). Only the project's own datasets are
// offered: reusing another project's would show its name to members who
// cannot read that project.
func (s *Store) SameDatasetIn(ctx context.Context, projectID int64, contentHash []byte, except int64) (int64, error) {
	if len(contentHash) < 8 {
		return 0, nil
	}
	if _, err := s.db.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(binary.BigEndian.Uint64(contentHash))); err != nil {
		return 0, fmt.Errorf("lock dataset hash: %w", err)
	}
	var id int64
	err := s.db.QueryRow(ctx, `SELECT d.id FROM datasets d JOIN dataset_projects dp ON dp.dataset_id = d.id AND dp.project_id = $1
		WHERE d.content_hash = $2 AND d.problem_count > 0 AND d.id <> $3
			AND (SELECT COALESCE(bool_or(o.status <> 'failed'), true) FROM comparisons o WHERE o.dataset_id = d.id)
		ORDER BY d.id LIMIT 1 FOR KEY SHARE OF d`, projectID, contentHash, except).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("find a dataset of the same content in project %d: %w", projectID, err)
	}
	return id, nil
}

// ListDatasetsFor returns the loaded datasets a user may see, newest first:
// those of the projects they are a member of (with all set, for admins,
// every dataset). Each carries the names of those of its projects.
// Datasets of one content (stored twice in projects that did not share
// it) are listed once, as the oldest, with the project names of all.
func (s *Store) ListDatasetsFor(ctx context.Context, userID int64, all bool) ([]Dataset, error) {
	rows, err := s.db.Query(ctx, `SELECT d.id, d.name, d.source_file, d.problem_count, d.created_at, d.content_hash,
			COALESCE(array_agg(p.name ORDER BY p.name) FILTER (WHERE p.id IS NOT NULL AND ($2 OR m.user_id IS NOT NULL)), '{}')
		FROM datasets d
		LEFT JOIN dataset_projects dp ON dp.dataset_id = d.id
		LEFT JOIN projects p ON p.id = dp.project_id
		LEFT JOIN project_members m ON m.project_id = dp.project_id AND m.user_id = $1
		WHERE d.problem_count > 0
		GROUP BY d.id
		HAVING $2 OR bool_or(m.user_id IS NOT NULL)
		ORDER BY d.id DESC`, userID, all)
	if err != nil {
		return nil, fmt.Errorf("list datasets: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Dataset, error) {
		var d Dataset
		err := row.Scan(&d.ID, &d.Name, &d.SourceFile, &d.ProblemCount, &d.CreatedAt, &d.ContentHash, &d.Projects)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("list datasets: %w", err)
	}
	return foldCopies(out), nil
}

// foldCopies lists datasets of one content hash once: the oldest (lowest
// id) stays, at its place in ds (newest first), with the others' project
// names added and Copies counting them. Datasets without a hash stay.
func foldCopies(ds []Dataset) []Dataset {
	keep := map[string]int{} // hash -> index in out of the oldest so far
	var out []Dataset
	for i := len(ds) - 1; i >= 0; i-- { // oldest first
		d := ds[i]
		if d.ContentHash == nil {
			out = append(out, d)
			continue
		}
		at, seen := keep[string(d.ContentHash)]
		if !seen {
			keep[string(d.ContentHash)] = len(out)
			out = append(out, d)
			continue
		}
		o := &out[at]
		o.Copies++
		for _, p := range d.Projects {
			if !slices.Contains(o.Projects, p) {
				o.Projects = append(o.Projects, p)
			}
		}
		slices.Sort(o.Projects)
	}
	slices.Reverse(out)
	return out
}

// DatasetReadable reports whether a user is a member of one of the
// dataset's projects (false for an unknown dataset).
func (s *Store) DatasetReadable(ctx context.Context, datasetID, userID int64) (bool, error) {
	var ok bool
	err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM dataset_projects dp
		JOIN project_members m ON m.project_id = dp.project_id AND m.user_id = $2 WHERE dp.dataset_id = $1)`, datasetID, userID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("access to dataset %d: %w", datasetID, err)
	}
	return ok, nil
}

// GetDataset returns one dataset or ErrNotFound.
func (s *Store) GetDataset(ctx context.Context, id int64) (Dataset, error) {
	d := Dataset{ID: id}
	err := s.db.QueryRow(ctx, `SELECT name, source_file, problem_count, created_at, content_hash FROM datasets WHERE id = $1`, id).
		Scan(&d.Name, &d.SourceFile, &d.ProblemCount, &d.CreatedAt, &d.ContentHash)
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
	// Without text, Extra is nil (an empty map per problem was a million
	// maps), and the slice is sized from the dataset's count (appending a
	// million problems allocated 730 MB for 150 MB).
	q := `SELECT id, dataset_id, idx, key, '', reference, subject, level, kind, NULL::jsonb FROM problems WHERE dataset_id = $1 ORDER BY idx`
	if withText {
		q = `SELECT id, dataset_id, idx, key, statement, reference, subject, level, kind, extra FROM problems WHERE dataset_id = $1 ORDER BY idx`
	}
	var n int
	if err := s.db.QueryRow(ctx, `SELECT coalesce((SELECT problem_count FROM datasets WHERE id = $1), 0)`, datasetID).Scan(&n); err != nil {
		return nil, fmt.Errorf("problems of dataset %d: %w", datasetID, err)
	}
	rows, err := s.db.Query(ctx, q, datasetID)
	if err != nil {
		return nil, fmt.Errorf("problems of dataset %d: %w", datasetID, err)
	}
	out, err := pgx.AppendRows(make([]Problem, 0, min(max(n, 0), 1<<24)), rows, scanProblem)
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
	var p Problem
	err := s.Batch(ctx, s.ProblemInto(id, &p))
	return p, err
}

// ProblemInto queues GetProblem's query with p as the result.
func (s *Store) ProblemInto(id int64, p *Problem) Queued {
	return func(b *pgx.Batch) {
		b.Queue(`SELECT id, dataset_id, idx, key, statement, reference, subject, level, kind, extra FROM problems WHERE id = $1`, id).
			Query(func(rows pgx.Rows) error {
				var err error
				*p, err = pgx.CollectExactlyOneRow(rows, scanProblem)
				if errors.Is(err, pgx.ErrNoRows) {
					return fmt.Errorf("problem %d: %w", id, ErrNotFound)
				}
				if err != nil {
					return fmt.Errorf("problem %d: %w", id, err)
				}
				return nil
			})
	}
}

// DatasetKinds returns the distinct problem kinds of a dataset ("math",
// "choice", "code", ...).
func (s *Store) DatasetKinds(ctx context.Context, datasetID int64) ([]string, error) {
	rows, err := s.db.Query(ctx, `SELECT DISTINCT kind FROM problems WHERE dataset_id = $1 ORDER BY kind`, datasetID)
	if err != nil {
		return nil, fmt.Errorf("problem kinds of dataset %d: %w", datasetID, err)
	}
	kinds, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("problem kinds of dataset %d: %w", datasetID, err)
	}
	return kinds, nil
}

// NoReference returns how many of a dataset's math and multiple-choice
// problems have no reference answer, and the first of them (its key and
// 0-based line): Reach's verifier cannot grade their samples.
func (s *Store) NoReference(ctx context.Context, datasetID int64) (n int, key string, idx int, err error) {
	err = s.db.QueryRow(ctx, `SELECT count(*), COALESCE(min(key) FILTER (WHERE idx = m.first), ''), COALESCE(min(m.first), 0)
		FROM problems, LATERAL (SELECT min(idx) AS first FROM problems WHERE dataset_id = $1 AND kind <> 'code' AND btrim(reference) = '') m
		WHERE dataset_id = $1 AND kind <> 'code' AND btrim(reference) = ''`, datasetID).Scan(&n, &key, &idx)
	if err != nil {
		return 0, "", 0, fmt.Errorf("problems without a reference in dataset %d: %w", datasetID, err)
	}
	return n, key, idx, nil
}

// CountKind returns how many problems of a dataset are of kind (e.g. "code").
func (s *Store) CountKind(ctx context.Context, datasetID int64, kind string) (int, error) {
	var n int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM problems WHERE dataset_id = $1 AND kind = $2`, datasetID, kind).Scan(&n); err != nil {
		return 0, fmt.Errorf("count %s problems of dataset %d: %w", kind, datasetID, err)
	}
	return n, nil
}
