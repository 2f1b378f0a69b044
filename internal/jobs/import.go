package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/metrics"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
	vmath "github.com/reach-lab/reach/internal/verify/math"
)

// ImportArgs starts the import of a comparison: it loads the dataset file
// (if one was uploaded) and enqueues one ImportRunArgs per samples file, so
// that the files of one comparison import in parallel on any workers.
type ImportArgs struct {
	ComparisonID int64 `json:"comparison_id"`
}

// Kind implements river.JobArgs.
func (ImportArgs) Kind() string { return "import" }

// InsertOpts makes a second enqueue of an unfinished import a no-op.
func (ImportArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: unfinished}}
}

// ImportWorker works ImportArgs.
type ImportWorker struct {
	river.WorkerDefaults[ImportArgs]
	st *store.Store
}

// Timeout: a dataset file is small; a dead worker is noticed by its lease.
func (w *ImportWorker) Timeout(*river.Job[ImportArgs]) time.Duration { return longTimeout }

// Work loads the dataset and fans out, in one transaction: a bad dataset
// line fails the comparison with file, line and field, and nothing is kept.
func (w *ImportWorker) Work(ctx context.Context, job *river.Job[ImportArgs]) error {
	id := job.Args.ComparisonID
	c, err := w.st.GetComparison(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	if c.Status != store.StatusPending && c.Status != store.StatusImporting {
		return nil // already started by an earlier attempt
	}
	err = w.st.WithTx(ctx, func(tx *store.Store) error { return w.start(ctx, tx, c) })
	if err != nil {
		if !transient(err) || job.Attempt >= job.MaxAttempts {
			failImport(ctx, w.st, c.ID, 0, err, !transient(err))
			return river.JobCancel(err)
		}
		return err
	}
	return nil
}

var errBadInput = errors.New("bad input")

func (w *ImportWorker) start(ctx context.Context, tx *store.Store, c store.Comparison) error {
	datasetID := int64(0)
	if c.DatasetID != nil {
		datasetID = *c.DatasetID
	} else if c.DatasetUploadID != nil {
		var err error
		var reused bool
		if datasetID, reused, err = importDataset(ctx, tx, *c.DatasetUploadID, c.ProjectID); err != nil {
			return err
		}
		if err := tx.SetComparisonDataset(ctx, c.ID, datasetID); err != nil {
			return err
		}
		if reused {
			if err := tx.MarkDatasetReused(ctx, c.ID); err != nil {
				return err
			}
		}
		if err := tx.DeleteUpload(ctx, *c.DatasetUploadID); err != nil {
			return err
		}
	} else {
		return fmt.Errorf("comparison %d has no dataset: %w", c.ID, errBadInput)
	}
	if err := tx.SetComparisonStatus(ctx, c.ID, store.StatusImporting, ""); err != nil {
		return err
	}
	var follow []river.JobArgs
	endpoints := 0
	for _, r := range c.Runs {
		if r.Endpoint.BaseURL != "" {
			endpoints++
			continue // sampled, not imported
		}
		if r.SplitOf != nil {
			// Its samples are in another run's file: that run's import
			// stores them.
			if r.Status == store.StatusPending {
				if err := markSplitImporting(ctx, tx, r); err != nil {
					return err
				}
			}
			continue
		}
		if r.Status == store.StatusImporting && r.UploadID != nil {
			// Started by an earlier attempt of this job, or run by the
			// stuck-comparison repair after the run's jobs were lost: its
			// import job is enqueued again (a no-op while one is queued),
			// which goes on with the open parts of a split import.
			follow = append(follow, ImportRunArgs{ComparisonID: c.ID, RunID: r.ID})
			continue
		}
		if r.Status != store.StatusPending {
			// Started by an earlier attempt of this job whose transaction
			// committed before its worker died: its import is done, and
			// its file may be gone already.
			continue
		}
		if r.UploadID == nil {
			if r.Status == store.StatusPending || r.Status == store.StatusImporting {
				// Only a `reach import` reading its own disk imports a run
				// without a stored file; this job cannot read it.
				return fmt.Errorf("model %q: its samples file %s is not stored here: the `reach import` process reading it from its disk stopped before the import finished; nothing of it was kept: run the import again: %w",
					r.ModelName, r.SourceFile, errBadInput)
			}
			return fmt.Errorf("model %q has no samples file: %w", r.ModelName, errBadInput)
		}
		if err := tx.SetRunStatus(ctx, r.ID, store.StatusImporting, ""); err != nil {
			return err
		}
		if err := tx.SetProgress(ctx, store.Progress{RunID: r.ID, Stage: "import", Unit: "bytes", Status: "queued"}); err != nil {
			return err
		}
		follow = append(follow, ImportRunArgs{ComparisonID: c.ID, RunID: r.ID})
	}
	if len(follow) > 0 {
		if err := enqueue(ctx, tx, follow...); err != nil {
			return err
		}
	}
	if endpoints > 0 {
		// Reach grades every sampled completion: a math or choice problem
		// without a reference answer would count as every model's failure
		// (as an import refuses it: samplePipeline.noReference).
		if err := refuseNoReference(ctx, tx, datasetID); err != nil {
			return err
		}
		if !c.AutoStart {
			return tx.SetComparisonStatus(ctx, c.ID, store.StatusConfigured, "")
		}
		c.DatasetID = &datasetID
		return StartSampling(ctx, nil, tx, c)
	}
	return nil
}

// refuseNoReference returns an errBadInput naming the dataset's math and
// choice problems without a reference answer (the first few, with their
// lines), or nil when every one has one.
func refuseNoReference(ctx context.Context, tx *store.Store, datasetID int64) error {
	ps, err := tx.Problems(ctx, datasetID, false)
	if err != nil {
		return err
	}
	var missing []string
	n := 0
	for _, p := range ps {
		if p.Kind == ingest.KindCode || strings.TrimSpace(p.Reference) != "" {
			continue
		}
		if n++; len(missing) < 5 {
			missing = append(missing, fmt.Sprintf("%q (line %d)", p.Key, p.Idx+1))
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("the dataset has %d problem(s) without a reference answer (answer, gold, gt or ground_truth): %s; Reach grades every sampled completion against it, so their samples would count as failures: add the answers, or leave those problems out of the dataset: %w",
		n, strings.Join(missing, ", "), errBadInput)
}

// failImport marks a comparison's import failed with err (naming the
// model when runID is set) and deletes what its runs stored, so nothing of
// a failed import is half-kept. The uploaded files are deleted too when the
// error is in the files (dropFiles); after a transient failure they stay so
// that Retry can import them again.
func failImport(ctx context.Context, st *store.Store, comparisonID, runID int64, err error, dropFiles bool) {
	ctx = context.WithoutCancel(ctx)
	c, gerr := st.GetComparison(ctx, comparisonID)
	if gerr != nil {
		slog.Error("record import failure", "comparison", comparisonID, "err", gerr, "import_err", err)
		return
	}
	msg := err.Error()
	if !dropFiles {
		msg = "the import failed after several attempts: " + msg + " (the files are kept: Retry imports them again)"
	}
	for _, r := range c.Runs {
		if runID != 0 && r.ID == runID && !errors.As(err, new(*ingest.Error)) {
			msg = fmt.Sprintf("model %q: %s", r.ModelName, msg)
		} else if runID != 0 && r.ID == runID && r.Format != "" && !strings.Contains(msg, "(read as ") {
			// A refusal of the file says which layout it was read as: a wrong guess shows.
			msg = fmt.Sprintf("%s (read as %s)", msg, ingest.Describe(ingest.Format(r.Format)))
		}
	}
	// The failure must be recorded whatever else is running: a transient
	// error (a deadlock, a lost connection) is tried again, or the
	// comparison would stay "importing" with no job to finish it.
	var ferr error
	for attempt := range 5 {
		if ferr = st.FailComparisonImport(ctx, comparisonID, runID, msg, dropFiles); ferr == nil || !transient(ferr) {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
	}
	if ferr != nil {
		slog.Error("record import failure", "comparison", comparisonID, "err", ferr, "import_err", msg)
		return
	}
	slog.Warn("import failed", "comparison", comparisonID, "run", runID, "err", msg)
	dropFailedDataset(ctx, st, comparisonID)
}

// dropFailedDataset deletes the dataset of a failed comparison when no
// import of it is in flight any more; otherwise the last import to stop
// does (see store.DropFailedDataset). It tries again for a few seconds:
// the lock it cannot take may belong to a job that is not an import (a
// verification or statistics job holding the comparison's row for a
// moment) and will not drop the dataset when it ends, and a stopped
// import's own transaction, ended by cancelling its connection, may take
// a moment to let go of its locks on the server.
func dropFailedDataset(ctx context.Context, st *store.Store, comparisonID int64) {
	ctx = context.WithoutCancel(ctx)
	const tries = 50
	for i := range tries {
		done, err := st.DropFailedDataset(ctx, comparisonID)
		if err != nil {
			slog.Error("drop the dataset of a failed import", "comparison", comparisonID, "err", err)
			return
		}
		if done {
			return
		}
		if i < tries-1 {
			time.Sleep(100 * time.Millisecond)
		}
	}
	slog.Info("dataset of a failed import left to the imports still stopping", "comparison", comparisonID)
}

// importDataset reads an uploaded dataset file into a dataset of project:
// a stored one of the same content (reused), or a new one.
func importDataset(ctx context.Context, tx *store.Store, uploadID, projectID int64) (id int64, reused bool, err error) {
	up, err := tx.GetUpload(ctx, uploadID)
	if err != nil {
		return 0, false, err
	}
	id, reused, err = ImportDataset(ctx, tx, up.Filename, func() (io.ReadCloser, error) { return io.NopCloser(tx.OpenUpload(ctx, uploadID)), nil }, projectID)
	if err == nil && reused {
		slog.Info("dataset already loaded: reused", "file", up.Filename, "dataset", id, "project", projectID)
	}
	return id, reused, err
}

// ImportDataset reads a dataset file (JSONL, named name, opened by open)
// inside tx and returns the id of its dataset. When projectID (0: none)
// already has a dataset of the same problems (ingest.DatasetHash), that one
// is returned with reused set and nothing is written; otherwise the file
// becomes a new dataset. A bad line is an *ingest.Error naming file, line
// and field; a file without problems is an error too.
//
// With a project the file is read twice: first for its hash, so that a
// dataset already stored is found before a copy is written. Deleting a
// written copy again cost seconds once the database held many samples
// (every problem's delete checks the samples tables' foreign keys, which
// have no index by problem).
func ImportDataset(ctx context.Context, tx *store.Store, name string, open func() (io.ReadCloser, error), projectID int64) (id int64, reused bool, err error) {
	if projectID != 0 {
		r, err := open()
		if err != nil {
			return 0, false, fmt.Errorf("open %s: %w", name, err)
		}
		hash, n := ingest.NewDatasetHash(), 0
		err = ingest.ReadDataset(r, name, func(p ingest.Problem) error { hash.Add(p); n++; return nil })
		r.Close()
		if err != nil {
			return 0, false, err
		}
		if n == 0 {
			return 0, false, fmt.Errorf("%s: no problems in the dataset file: %w", name, errBadInput)
		}
		same, err := tx.SameDatasetIn(ctx, projectID, hash.Sum(), 0)
		if err != nil {
			return 0, false, err
		}
		if same != 0 {
			return same, true, nil
		}
	}
	r, err := open()
	if err != nil {
		return 0, false, fmt.Errorf("open %s: %w", name, err)
	}
	defer r.Close()
	dsID, err := tx.CreateDataset(ctx, name, name)
	if err != nil {
		return 0, false, err
	}
	hash := ingest.NewDatasetHash()
	var batch []store.Problem
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := tx.InsertProblems(ctx, dsID, batch)
		batch = batch[:0]
		return err
	}
	err = ingest.ReadDataset(r, name, func(p ingest.Problem) error {
		hash.Add(p)
		key := p.Key
		if key == "" {
			key = strconv.Itoa(p.Index)
		}
		batch = append(batch, store.Problem{Idx: p.Index, Key: key, Statement: p.Statement, Reference: p.Reference,
			Subject: p.Subject, Level: p.Level, Kind: p.Kind, Extra: p.Extra})
		if len(batch) >= batchRows {
			return flush()
		}
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	if err := flush(); err != nil {
		return 0, false, err
	}
	if err := tx.FinishDataset(ctx, dsID); err != nil {
		return 0, false, err
	}
	d, err := tx.GetDataset(ctx, dsID)
	if err != nil {
		return 0, false, err
	}
	if d.ProblemCount == 0 {
		return 0, false, fmt.Errorf("%s: no problems in the dataset file: %w", name, errBadInput)
	}
	return dsID, false, tx.SetDatasetHash(ctx, dsID, hash.Sum())
}

// ImportRunArgs imports one model's samples file.
type ImportRunArgs struct {
	ComparisonID int64 `json:"comparison_id"`
	RunID        int64 `json:"run_id"`
}

// Kind implements river.JobArgs.
func (ImportRunArgs) Kind() string { return "import-run" }

// InsertOpts makes a second enqueue of an unfinished import a no-op.
func (ImportRunArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: unfinished}}
}

// ImportRunWorker works ImportRunArgs.
type ImportRunWorker struct {
	river.WorkerDefaults[ImportRunArgs]
	st *store.Store
	// v grades samples that carry no verdict as they are imported, on all
	// cores: far cheaper than updating a million stored rows afterwards.
	// Without it (or for kinds it does not grade inline) they are left to
	// a VerifyJob.
	v verify.Verifier
	// splitAt is the chunk size of a split import (see planChunks); 0
	// never splits.
	splitAt int64
	// writers is the COPY streams of a large file imported whole.
	writers int
}

// Timeout lets a large file import for long; a dead worker is noticed by
// its lease within a minute, not by this timeout.
func (w *ImportRunWorker) Timeout(*river.Job[ImportRunArgs]) time.Duration { return longTimeout }

// errImportAborted rolls back a run's import when another file of the
// comparison failed meanwhile.
var errImportAborted = errors.New("the comparison's import failed")

// Work imports the uploaded file in one transaction: a bad line anywhere
// rolls the run back and fails the comparison with an error naming file,
// line and field. A killed worker's transaction dies with its connection,
// so the job that resumes it starts from a clean run.
func (w *ImportRunWorker) Work(ctx context.Context, job *river.Job[ImportRunArgs]) error {
	a := job.Args
	return importJob(ctx, w.st, w.v, job.Attempt >= job.MaxAttempts, a.ComparisonID, a.RunID, func(ctx context.Context, r store.Run) (source, error) {
		if r.UploadID == nil {
			return source{}, fmt.Errorf("model %q has no samples file: %w", r.ModelName, errBadInput)
		}
		up, err := uploadSource(ctx, w.st, *r.UploadID)
		up.splitAt, up.writers = w.splitAt, w.writers
		for _, id := range r.MoreUploadIDs {
			if err != nil {
				break
			}
			var more source
			more, err = uploadSource(ctx, w.st, id)
			up.more = append(up.more, more)
			up.size += more.size
		}
		return up, err
	}, nil)
}

// source is a samples file to import: an upload stored in Postgres, or a
// file on the disk of the `reach import` process that works the job.
type source struct {
	name  string
	size  int64
	local bool // a local file: nothing to delete, no Retry without the process
	open  func() (io.ReadCloser, error)
	head  func(n int) ([]byte, error) // the first n bytes (or fewer), to sniff the format
	// drop, when set, deletes the stored file inside the import's
	// transaction once the import succeeded.
	drop func(ctx context.Context, tx *store.Store) error
	// splitAt > 0 imports a file of at least two such chunks of plain
	// JSONL in chunks of this many bytes (planChunks).
	splitAt int64
	// writers is how many transactions at once COPY a file imported
	// whole of at least multiWriterBytes (importWriters).
	writers int
	// openAt reads the file from a byte offset on (a chunk).
	openAt func(off int64) (io.ReadCloser, error)
	// path and queue, for a local file: where it is, and the queue of the
	// one process that can read it (its chunk jobs go there).
	path, queue string
	// more are further files of the same model (local imports), read after this one and pooled
	// with it per problem; such an import is not split.
	more []source
}

// uploadSource reads an upload through the pool, not the import's
// transaction: the transaction's connection is busy with COPY while the
// parser reads the next chunk.
func uploadSource(ctx context.Context, st *store.Store, id int64) (source, error) {
	up, err := st.GetUpload(ctx, id)
	if err != nil {
		return source{}, err
	}
	return source{name: up.Filename, size: up.Size,
		open: func() (io.ReadCloser, error) { return io.NopCloser(st.OpenUpload(ctx, id)), nil },
		openAt: func(off int64) (io.ReadCloser, error) {
			r, err := st.OpenUploadAt(ctx, id, off)
			return io.NopCloser(r), err
		},
		head: func(n int) ([]byte, error) { return st.UploadHead(ctx, id, n) },
		drop: func(ctx context.Context, tx *store.Store) error { return tx.DeleteUpload(ctx, id) }}, nil
}

// importJob is the work of an import job of one run: the file from src
// is imported in one transaction (by work, or importRun when work is nil),
// and on a bad file (or on the last attempt) the comparison fails with
// nothing of its runs kept.
func importJob(ctx context.Context, st *store.Store, v verify.Verifier, lastAttempt bool, comparisonID, runID int64,
	src func(context.Context, store.Run) (source, error),
	work func(ctx context.Context, tx *store.Store, c store.Comparison, r store.Run, up source) (pipelineStats, error)) error {
	c, err := st.GetComparison(ctx, comparisonID)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err)
	}
	if err != nil {
		return err
	}
	var run *store.Run
	for i := range c.Runs {
		if c.Runs[i].ID == runID {
			run = &c.Runs[i]
		}
	}
	if run == nil {
		return river.JobCancel(fmt.Errorf("run %d is not in comparison %d", runID, comparisonID))
	}
	if c.Status == store.StatusFailed || (run.Status != store.StatusPending && run.Status != store.StatusImporting) {
		return nil // the comparison failed, or an earlier attempt imported the run
	}
	if c.DatasetID == nil {
		return river.JobCancel(fmt.Errorf("comparison %d has no dataset yet", c.ID))
	}
	start := time.Now()
	var sum pipelineStats
	file, err := src(ctx, *run)
	if err == nil {
		err = st.WithTx(ctx, func(tx *store.Store) error {
			var err error
			if work != nil {
				sum, err = work(ctx, tx, c, *run, file)
			} else {
				sum, err = importRun(ctx, st, tx, v, c, *run, file)
			}
			return err
		})
	}
	if errors.Is(err, errChunkGone) {
		return nil
	}
	if errors.Is(err, errImportAborted) {
		// This import's transaction is gone: the comparison's dataset can
		// go unless another file's import is still stopping.
		dropFailedDataset(ctx, st, c.ID)
		return nil
	}
	if err != nil {
		// Another file of the comparison failed first (and its failure may
		// have deleted this file): that error is the one to show.
		if now, gerr := st.GetComparison(context.WithoutCancel(ctx), c.ID); gerr == nil && now.Status == store.StatusFailed {
			dropFailedDataset(ctx, st, c.ID)
			return river.JobCancel(fmt.Errorf("stopped: %w", errImportAborted))
		} else if errors.Is(gerr, store.ErrNotFound) {
			// Deleted during its import: nothing is left to fail.
			slog.Info("import stopped: its comparison was deleted", "comparison", c.ID, "run", run.ID)
			return river.JobCancel(fmt.Errorf("the comparison was deleted: %w", err))
		}
		if file.local && ctx.Err() != nil {
			// The process that reads the file is stopping: no other
			// process can read it, so the import ends here.
			failImport(ctx, st, c.ID, run.ID, fmt.Errorf("the `reach import` process reading %s stopped before the import finished; nothing of it was kept: run the import again", file.name), true)
			return river.JobCancel(err)
		}
		if !transient(err) || lastAttempt {
			failImport(ctx, st, c.ID, run.ID, err, !transient(err) || file.local)
			return river.JobCancel(err)
		}
		return err
	}
	metrics.SamplesImported(sum.stored) // committed
	metrics.SamplesVerified(sum.graded)
	if !sum.runDone {
		slog.Info("imported a part of a samples file", "comparison", c.ID, "model", run.ModelName, "chunks", sum.chunks, "samples", sum.samples,
			"verified", sum.verified, "duration", time.Since(start).Round(time.Millisecond))
		return nil // a first pass that split the file, or a chunk not the last
	}
	slog.Info("imported samples", "comparison", c.ID, "model", run.ModelName, "samples", sum.samples, "count_rows", sum.counts,
		"verified", sum.verified, "copy_streams", max(sum.writers, 1), "duration", time.Since(start).Round(time.Millisecond))
	// Autovacuum analyses the filled partitions only a minute or so later;
	// until then their queries are planned from stale statistics (the
	// problem page's: 5.9 ms instead of 1.3 ms on a fresh 1M-sample run; a
	// search read every sample of a run instead of its index). ANALYZE reads
	// at most 30,000 rows of each, so it is cheap for a small import too.
	var filled []int64
	for _, r := range stepRuns(c, *run) {
		filled = append(filled, r.ID)
	}
	if err := st.AnalyzeSamples(ctx, filled...); err != nil {
		slog.Warn("analyze samples after import", "comparison", c.ID, "err", err)
	}
	if err := st.AnalyzeProblems(ctx); err != nil { // the dataset may be new too
		slog.Warn("analyze problems after import", "comparison", c.ID, "err", err)
	}
	if err := st.FinishImportIfDone(ctx, c.ID); err != nil {
		return err
	}
	if err := st.MarkComparisonReadyIfDone(ctx, c.ID); err != nil {
		return err
	}
	return startStatsIfReady(ctx, st, c.ID)
}

// Batch limits: rows and completion bytes per COPY, so memory stays flat
// whatever the file size.
const (
	batchRows  = 2000
	batchBytes = 16 << 20
)

// problemIndex resolves a samples file's problem id: the dataset's key
// (unique_id, task_id, ...) first, then the 0-based line index.
type problemIndex struct {
	byKey map[string]int64
	byIdx map[string]int64
	byID  map[int64]verify.Problem // what the verifier needs
	keyOf map[int64]string
	ids   []int64               // in dataset order
	match []ingest.MatchProblem // in dataset order, for ingest.Matcher
	// dataset is the dataset's file name, and noRef its math and choice
	// problems without a reference answer (by id, their 0-based line):
	// Reach cannot grade their samples (see samplePipeline.noReference).
	dataset string
	noRef   map[int64]int
}

func newProblemIndex(ps []store.Problem, dataset string) problemIndex {
	ix := problemIndex{byKey: make(map[string]int64, len(ps)), byIdx: make(map[string]int64, len(ps)),
		byID: make(map[int64]verify.Problem, len(ps)), keyOf: make(map[int64]string, len(ps)),
		dataset: dataset, noRef: map[int64]int{}}
	for _, p := range ps {
		if p.Kind != ingest.KindCode && strings.TrimSpace(p.Reference) == "" {
			ix.noRef[p.ID] = p.Idx
		}
		ix.byKey[p.Key] = p.ID
		ix.byIdx[strconv.Itoa(p.Idx)] = p.ID
		ix.byID[p.ID] = verify.Problem{Reference: p.Reference, Kind: p.Kind}
		ix.keyOf[p.ID] = p.Key
		ix.ids = append(ix.ids, p.ID)
		sol := p.Extra["solution"]
		if sol == "" {
			sol = p.Extra["canonical_solution"]
		}
		ix.match = append(ix.match, ingest.MatchProblem{Key: p.Key, Statement: p.Statement, Reference: p.Reference, Solution: sol})
	}
	return ix
}

// matcher matches one samples file's samples to the dataset and checks the
// file against it (see ingest.Matcher). A reference answer the file carries
// is compared with the dataset's by math equivalence.
func (ix problemIndex) matcher(file string) *ingest.Matcher {
	return ingest.NewMatcher(file, ix.match, func(ref, fileRef string) bool {
		return strings.Join(strings.Fields(ref), "") == strings.Join(strings.Fields(fileRef), "") ||
			vmath.VerifyAnswer(ref, fileRef, false).IsCorrect()
	})
}

func (ix problemIndex) lookup(key string) (int64, bool) {
	if id, ok := ix.byKey[key]; ok {
		return id, true
	}
	id, ok := ix.byIdx[key]
	return id, ok
}

// importWarnings is what an import changed or doubted without failing
// (stored with the run, shown on the comparison page): how many, and the
// first few in full.
type importWarnings struct {
	Count    int      `json:"count"`
	Examples []string `json:"examples"`
}

func (w *importWarnings) add(x ingest.Warning) {
	w.Count++
	if len(w.Examples) < 5 {
		w.Examples = append(w.Examples, x.Err.Error())
	}
}

// save stores the warnings, if any, and the run's metadata meta (nil:
// none) with run runID.
func (w *importWarnings) save(ctx context.Context, tx *store.Store, runID int64, meta *ingest.RunMeta) error {
	if meta == nil && w.Count == 0 {
		return nil
	}
	var ws any
	if w.Count > 0 {
		ws = w
	}
	return tx.SetRunSource(ctx, runID, meta, ws)
}

// countingReader counts bytes read, for the progress bar.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// importRun imports one run's file inside tx and enqueues the job that
// follows it (verification or aggregation); st (outside tx) records the
// progress as it goes, so that the progress page sees it.
func importRun(ctx context.Context, st, tx *store.Store, v verify.Verifier, c store.Comparison, r store.Run, up source) (pipelineStats, error) {
	var sum pipelineStats
	// A split import planned by an earlier attempt of this job (its worker
	// died after the plan committed, before River recorded the job done):
	// its parts go on. Planning again would delete what parts stored.
	open, err := tx.OpenImportChunks(ctx, r.ID)
	if err != nil {
		return sum, err
	}
	if len(open) > 0 {
		sum.chunks = len(open)
		return sum, enqueueChunks(ctx, tx, c, r, up, open)
	}
	steps := stepRuns(c, r)
	format, mapping, err := runFormat(r, up)
	if err != nil {
		return sum, err
	}
	split := false
	if up.splitAt > 0 && up.size >= 2*up.splitAt && len(up.more) == 0 && len(steps) <= 1 {
		head, err := up.head(ingest.SniffBytes)
		if err != nil {
			return sum, err
		}
		split = ingest.Splittable(head, format, mapping)
	}
	writers := 1
	if !split && len(steps) <= 1 && up.size >= multiWriterBytes {
		writers = max(1, up.writers)
	}
	if writers > 1 {
		// Rows of an earlier attempt whose further writers committed:
		// deleted and committed before the writers start, since a writer
		// inserting a row this transaction deleted would wait for it,
		// while it waits for the writer.
		if err := st.ClearRun(ctx, r.ID); err != nil {
			return sum, err
		}
	}
	for _, sr := range steps {
		if err := tx.ClearRun(ctx, sr.ID); err != nil {
			return sum, err
		}
	}
	problems, err := tx.Problems(ctx, *c.DatasetID, true) // statements: the Matcher checks the file against them
	if err != nil {
		return sum, err
	}
	ix := newProblemIndex(problems, c.DatasetName)
	if len(steps) > 1 {
		return importSplit(ctx, st, tx, v, c, r, up, format, mapping, ix, steps)
	}
	if split {
		return planChunks(ctx, st, tx, c, r, up, format, mapping, ix)
	}

	f, err := up.open()
	if err != nil {
		return sum, fmt.Errorf("open %s: %w", up.name, err)
	}
	defer f.Close()
	cr := &countingReader{r: f}
	// The goroutine that owns tx never waits on another connection while
	// tx is open: a connection that waits on tx's locks (the failure of
	// another file of the comparison, deleting what it stored) could be
	// the one it waits for, a deadlock Postgres cannot see. The progress
	// and the check whether the comparison failed meanwhile run beside it
	// (watchImport); a failure cancels ctx, which ends tx at once.
	var written atomic.Int64
	var countsOnly atomic.Bool
	prog := store.Progress{RunID: r.ID, Stage: "import", Total: up.size, Unit: "bytes", Status: "running"}
	ctx, stopWatch, release := watchImport(ctx, st, c.ID, func() store.Progress {
		p, unit := prog, "samples"
		if countsOnly.Load() {
			unit = "problems"
		}
		p.Done = cr.n.Load()
		p.Detail = fmt.Sprintf("%d %s", written.Load(), unit)
		return p
	})
	defer release()
	defer stopWatch()

	p := samplePipeline{v: v, ix: ix, mt: ix.matcher(up.name), reverify: c.Reverify, runID: r.ID, file: up.name}
	p.mt.GuardCompletions(format == ingest.FormatMapped) // a known layout's completion field is right by construction
	if r.Step != nil && ingest.CarriesSteps(format) {
		p.route = oneStep(r, up.name, p.mt)
	}
	var (
		meta  *ingest.RunMeta
		warns importWarnings
	)
	read := func(onSample func(ingest.Sample) error, onCount func(ingest.Count) error) error {
		opts := ingest.Options{OnSample: onSample, OnCount: onCount,
			OnMeta:    func(m ingest.RunMeta) error { meta = &m; return nil },
			OnWarning: warns.add}
		if len(up.more) > 0 {
			p.mt.NextFile(up.name) // pooled: every file's indices renumbered
		}
		if err := ingest.Read(cr, up.name, format, mapping, opts); err != nil {
			return err
		}
		for _, more := range up.more {
			if err := readMore(more, p.mt, cr, format, mapping, opts); err != nil {
				return err
			}
		}
		return p.mt.Finish()
	}
	if hook := importHook.Load(); hook != nil {
		(*hook)(ctx, r.ID, tx, 0)
	}
	ws, err := newImportWriters(ctx, st, tx, writers, p.explain)
	if err != nil {
		return sum, err
	}
	defer ws.rollback(ctx)
	sum, err = p.run(ctx, read, func(b *batch) error {
		if len(b.samples) > 0 {
			if err := ws.write(ctx, b); err != nil {
				return err
			}
			written.Add(int64(len(b.samples)))
		}
		if len(b.counts) > 0 {
			if err := tx.InsertCounts(ctx, b.counts); err != nil {
				return err
			}
			countsOnly.Store(true)
			written.Add(int64(len(b.counts)))
		}
		if hook := importHook.Load(); hook != nil {
			(*hook)(ctx, r.ID, tx, written.Load())
		}
		return nil
	})
	if cerr := ws.close(); err == nil {
		err = cerr
	}
	stopWatch()
	if errors.Is(context.Cause(ctx), errImportAborted) {
		return sum, errImportAborted // whatever the cancelled COPY said
	}
	if err != nil {
		return sum, err
	}
	if sum.samples == 0 && sum.counts == 0 {
		return sum, &ingest.Error{File: up.name, Line: 1, Msg: "no samples in the file"}
	}
	if sum.samples > 0 && sum.counts > 0 {
		return sum, &ingest.Error{File: up.name, Msg: "the file mixes samples and per-problem counts"}
	}
	// Serialise with failImport, which locks the comparison before the
	// runs (so must this, before it writes its run's row): a comparison
	// that failed while this file was read keeps nothing of it.
	if st, err := tx.LockComparisonStatus(ctx, c.ID); err != nil {
		return sum, err
	} else if st == store.StatusFailed {
		return sum, errImportAborted
	}
	if err := warns.save(ctx, tx, r.ID, meta); err != nil {
		return sum, err
	}
	sum.runDone = true
	if err := finishRunImport(ctx, tx, v, c, r, up, format, sum); err != nil {
		return sum, err
	}
	sum.writers = writers
	return sum, ws.commit(ctx) // tx commits next, in importJob
}

// readMore reads one more file of a model imported from several, counting its bytes in cr.
func readMore(f source, mt *ingest.Matcher, cr *countingReader, format ingest.Format, mapping *ingest.Mapping, opts ingest.Options) error {
	r, err := f.open()
	if err != nil {
		return fmt.Errorf("open %s: %w", f.name, err)
	}
	defer r.Close()
	cr.r = r
	mt.NextFile(f.name)
	return ingest.Read(cr, f.name, format, mapping, opts)
}

// finishRunImport ends a run's import inside tx once all its samples are
// stored (sum): it deletes the stored file, records the progress and how
// the run was graded, and enqueues the job that follows (verification or
// aggregation).
func finishRunImport(ctx context.Context, tx *store.Store, v verify.Verifier, c store.Comparison, r store.Run, up source, format ingest.Format, sum pipelineStats) error {
	for _, f := range append([]source{up}, up.more...) {
		if f.drop != nil {
			if err := f.drop(ctx, tx); err != nil {
				return err
			}
		}
	}
	prog := store.Progress{RunID: r.ID, Stage: "import", Total: up.size, Unit: "bytes"}
	prog.Done, prog.Status = up.size, "done"
	if sum.counts > 0 {
		prog.Detail = fmt.Sprintf("%d problems (counts only)", sum.counts)
		if err := tx.SetProgress(ctx, prog); err != nil {
			return err
		}
		if err := tx.SetRunImported(ctx, r.ID, string(format), false, "file"); err != nil {
			return err
		}
		return tx.SetRunStatus(ctx, r.ID, store.StatusReady, "")
	}
	prog.Detail = fmt.Sprintf("%d samples", sum.samples)
	if err := tx.SetProgress(ctx, prog); err != nil {
		return err
	}
	if sum.verified > 0 {
		if err := tx.SetProgress(ctx, store.Progress{RunID: r.ID, Stage: "verify", Done: sum.verified, Total: sum.verified, Unit: "samples",
			Status: "done", Detail: fmt.Sprintf("%d samples verified by %s during the import", sum.verified, v.Name())}); err != nil {
			return err
		}
	}
	if sum.verified > 0 && sum.fileLabel && c.Reverify {
		if err := tx.SetVerdictsChanged(ctx, r.ID, sum.changed); err != nil {
			return err
		}
	}
	source := "file"
	if sum.verified > 0 || sum.pending > 0 {
		source = "verifier"
		if sum.fileLabel && !c.Reverify {
			source = "file+verifier"
		}
	}
	if err := tx.SetRunImported(ctx, r.ID, string(format), true, source); err != nil {
		return err
	}
	if sum.pending > 0 {
		if err := tx.SetProgress(ctx, store.Progress{RunID: r.ID, Stage: "verify", Total: sum.pending, Unit: "samples", Status: "queued"}); err != nil {
			return err
		}
		if err := tx.SetRunStatus(ctx, r.ID, store.StatusVerifying, ""); err != nil {
			return err
		}
		return enqueue(ctx, tx, VerifyArgs{RunID: r.ID, ComparisonID: c.ID})
	}
	if err := tx.SetProgress(ctx, store.Progress{RunID: r.ID, Stage: "aggregate", Status: "queued"}); err != nil {
		return err
	}
	if err := tx.SetRunStatus(ctx, r.ID, "aggregating", ""); err != nil {
		return err
	}
	return enqueue(ctx, tx, AggregateArgs{RunID: r.ID, ComparisonID: c.ID})
}

// watchEvery is how often an import records its progress and checks
// whether its comparison failed meanwhile.
const watchEvery = 250 * time.Millisecond

// importHook, when set (by tests only), runs in the goroutine that owns
// the import's transaction of a run: before its file is read (stored = 0)
// and after each batch it stored (stored = rows so far).
var importHook atomic.Pointer[func(ctx context.Context, runID int64, tx *store.Store, stored int64)]

// watchImport records an import's progress (read from progress) through
// st every watchEvery until stop is called or ctx ends, and cancels the
// returned context with errImportAborted when the comparison failed
// meanwhile (another of its files was bad, or its import was cancelled):
// the import must roll back rather than read on, since the failure keeps
// nothing of it. stop returns once the watcher has stopped (a progress
// write under way finishes first, so that none lands after the import's
// own last one); release ends the returned context, when the import is
// over. It runs beside the goroutine that owns the import's
// transaction, so that one never waits on another connection while it
// holds locks (only for this watcher to stop, at the end, and no
// connection the watcher uses waits on the import's transaction: a
// failure takes no lock the import holds before it locks the comparison).
func watchImport(ctx context.Context, st *store.Store, comparisonID int64, progress func() store.Progress) (wctx context.Context, stop, release func()) {
	ctx, abort := context.WithCancelCause(ctx)
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for {
			if now, err := st.ComparisonStatus(ctx, comparisonID); err == nil && now == store.StatusFailed {
				abort(errImportAborted)
				return
			}
			_ = st.SetProgress(ctx, progress())
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return ctx, sync.OnceFunc(func() { close(quit); <-done }), func() { abort(nil) }
}

// runFormat returns the format and mapping of a run's file: the confirmed
// ones stored on the run, else what Sniff guesses from the file's head.
func runFormat(r store.Run, up source) (ingest.Format, *ingest.Mapping, error) {
	if r.Format != "" {
		var m *ingest.Mapping
		if len(r.Mapping) > 0 && string(r.Mapping) != "null" {
			m = new(ingest.Mapping)
			if err := jsonUnmarshal(r.Mapping, m); err != nil {
				return "", nil, fmt.Errorf("mapping of %q: %w", r.ModelName, err)
			}
		}
		return ingest.Format(r.Format), m, nil
	}
	head, err := up.head(ingest.SniffBytes)
	if err != nil {
		return "", nil, err
	}
	return ingest.Sniff(head, up.name)
}
