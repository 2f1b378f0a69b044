package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/riverqueue/river"

	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
)

// ImportArgs imports a comparison's uploaded dataset and samples files.
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
	// v grades samples that carry no verdict as they are imported (all
	// cores, batch by batch): far cheaper than updating a million stored
	// rows afterwards. Without it they are left to a VerifyJob.
	v verify.Verifier
}

// Timeout lets a large import run long (River's default is 1 minute).
func (w *ImportWorker) Timeout(*river.Job[ImportArgs]) time.Duration { return longTimeout }

// Batch limits: rows and completion bytes per COPY, so memory stays flat
// whatever the file size.
const (
	batchRows  = 2000
	batchBytes = 16 << 20
)

// Work imports everything in one transaction: a bad line anywhere rolls the
// whole import back and fails the comparison with an error naming file,
// line and field; nothing is half-kept.
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
		return nil // already imported by an earlier attempt
	}
	if err := w.st.SetComparisonStatus(ctx, id, store.StatusImporting, ""); err != nil {
		return err
	}
	start := time.Now()
	err = w.st.WithTx(ctx, func(tx *store.Store) error {
		return w.importAll(ctx, tx, c)
	})
	if err != nil {
		var ie *ingest.Error
		if errors.As(err, &ie) || errors.Is(err, errBadInput) || job.Attempt >= job.MaxAttempts {
			w.fail(ctx, c, err)
			return river.JobCancel(err)
		}
		return err
	}
	slog.Info("imported comparison", "comparison", id, "name", c.Name, "duration", time.Since(start).Round(time.Millisecond))
	return nil
}

var errBadInput = errors.New("bad input")

func (w *ImportWorker) fail(ctx context.Context, c store.Comparison, err error) {
	ctx = context.WithoutCancel(ctx)
	msg := err.Error()
	if err := w.st.SetComparisonStatus(ctx, c.ID, store.StatusFailed, msg); err != nil {
		slog.Error("record import failure", "comparison", c.ID, "err", err)
	}
	for _, r := range c.Runs {
		_ = w.st.SetRunStatus(ctx, r.ID, store.StatusFailed, "")
		_ = w.st.SetProgress(ctx, store.Progress{RunID: r.ID, Stage: "import", Status: "failed", Error: msg})
		if r.UploadID != nil {
			_ = w.st.DeleteUpload(ctx, *r.UploadID)
		}
	}
	if c.DatasetUploadID != nil {
		_ = w.st.DeleteUpload(ctx, *c.DatasetUploadID)
	}
}

func (w *ImportWorker) importAll(ctx context.Context, tx *store.Store, c store.Comparison) error {
	datasetID := int64(0)
	if c.DatasetID != nil {
		datasetID = *c.DatasetID
	} else if c.DatasetUploadID != nil {
		var err error
		if datasetID, err = importDataset(ctx, tx, *c.DatasetUploadID); err != nil {
			return err
		}
		if err := tx.SetComparisonDataset(ctx, c.ID, datasetID); err != nil {
			return err
		}
	} else {
		return fmt.Errorf("comparison %d has no dataset: %w", c.ID, errBadInput)
	}
	problems, err := tx.Problems(ctx, datasetID, false)
	if err != nil {
		return err
	}
	idx := newProblemIndex(problems)

	var follow []river.JobArgs
	endpoints := 0
	for _, r := range c.Runs {
		if r.Endpoint.BaseURL != "" {
			endpoints++
			continue // sampled, not imported
		}
		next, err := w.importRun(ctx, tx, c, r, idx)
		if err != nil {
			return err
		}
		if next != nil {
			follow = append(follow, next)
		}
	}
	if c.DatasetUploadID != nil {
		if err := tx.DeleteUpload(ctx, *c.DatasetUploadID); err != nil {
			return err
		}
	}
	if endpoints > 0 {
		if len(follow) > 0 {
			if err := enqueue(ctx, tx, follow...); err != nil {
				return err
			}
		}
		if !c.AutoStart {
			return tx.SetComparisonStatus(ctx, c.ID, store.StatusConfigured, "")
		}
		c.DatasetID = &datasetID
		return StartSampling(ctx, nil, tx, c)
	}
	if err := tx.SetComparisonStatus(ctx, c.ID, store.StatusVerifying, ""); err != nil {
		return err
	}
	if len(follow) > 0 {
		if err := enqueue(ctx, tx, follow...); err != nil {
			return err
		}
	}
	return tx.MarkComparisonReadyIfDone(ctx, c.ID)
}

// importDataset reads an uploaded dataset file into a new dataset.
func importDataset(ctx context.Context, tx *store.Store, uploadID int64) (int64, error) {
	up, err := tx.GetUpload(ctx, uploadID)
	if err != nil {
		return 0, err
	}
	dsID, err := tx.CreateDataset(ctx, up.Filename, up.Filename)
	if err != nil {
		return 0, err
	}
	var batch []store.Problem
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := tx.InsertProblems(ctx, dsID, batch)
		batch = batch[:0]
		return err
	}
	err = ingest.ReadDataset(tx.OpenUpload(ctx, uploadID), up.Filename, func(p ingest.Problem) error {
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
		return 0, err
	}
	if err := flush(); err != nil {
		return 0, err
	}
	if err := tx.FinishDataset(ctx, dsID); err != nil {
		return 0, err
	}
	d, err := tx.GetDataset(ctx, dsID)
	if err != nil {
		return 0, err
	}
	if d.ProblemCount == 0 {
		return 0, fmt.Errorf("%s: no problems in the dataset file: %w", up.Filename, errBadInput)
	}
	return dsID, nil
}

// problemIndex resolves a samples file's problem id: the dataset's key
// (unique_id, task_id, ...) first, then the 0-based line index.
type problemIndex struct {
	byKey map[string]int64
	byIdx map[string]int64
	byID  map[int64]verify.Problem // what the verifier needs
}

func newProblemIndex(ps []store.Problem) problemIndex {
	ix := problemIndex{byKey: make(map[string]int64, len(ps)), byIdx: make(map[string]int64, len(ps)),
		byID: make(map[int64]verify.Problem, len(ps))}
	for _, p := range ps {
		ix.byKey[p.Key] = p.ID
		ix.byIdx[strconv.Itoa(p.Idx)] = p.ID
		ix.byID[p.ID] = verify.Problem{Reference: p.Reference, Kind: p.Kind}
	}
	return ix
}

func (ix problemIndex) lookup(key string) (int64, bool) {
	if id, ok := ix.byKey[key]; ok {
		return id, true
	}
	id, ok := ix.byIdx[key]
	return id, ok
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

// importRun imports one run's upload and returns the job that follows it
// (verification or aggregation), or nil when the run is complete.
func (w *ImportWorker) importRun(ctx context.Context, tx *store.Store, c store.Comparison, r store.Run, ix problemIndex) (river.JobArgs, error) {
	if r.UploadID == nil {
		return nil, fmt.Errorf("model %q has no samples file: %w", r.ModelName, errBadInput)
	}
	up, err := tx.GetUpload(ctx, *r.UploadID)
	if err != nil {
		return nil, err
	}
	if err := tx.ClearRun(ctx, r.ID); err != nil {
		return nil, err
	}
	format, mapping, err := runFormat(ctx, tx, r, up)
	if err != nil {
		return nil, err
	}
	prog := store.Progress{RunID: r.ID, Stage: "import", Total: up.Size, Unit: "bytes", Status: "running"}
	_ = w.st.SetProgress(ctx, prog)
	cr := &countingReader{r: tx.OpenUpload(ctx, *r.UploadID)}

	var (
		samples   []store.Sample
		bytesIn   int
		nSamples  int64
		counts    []store.Count
		nCounts   int64
		pending   int64
		verified  int64
		changed   int64 // Reach's verdict differs from the file's label
		lastTick  time.Time
		fileLabel bool
	)
	tick := func(unit string, n int64) {
		if time.Since(lastTick) < 500*time.Millisecond {
			return
		}
		lastTick = time.Now()
		prog.Done = cr.n.Load()
		prog.Detail = fmt.Sprintf("%d %s", n, unit)
		_ = w.st.SetProgress(ctx, prog)
	}
	flushSamples := func() error {
		if len(samples) == 0 {
			return nil
		}
		if w.v != nil {
			n, ch := gradeSamples(ctx, w.v, ix, samples)
			verified, changed = verified+n, changed+ch
		}
		err := tx.InsertSamples(ctx, samples)
		samples, bytesIn = samples[:0], 0
		tick("samples", nSamples)
		return err
	}
	unknown := func(file string, line int, key string) error {
		return &ingest.Error{File: file, Line: line, Field: "problem id",
			Msg: fmt.Sprintf("problem %q is not in the dataset (%d problems; matched by id, then by 0-based line)", key, len(ix.byKey))}
	}
	onSample := func(s ingest.Sample) error {
		pid, ok := ix.lookup(s.ProblemKey)
		if !ok {
			return unknown(up.Filename, s.Line, s.ProblemKey)
		}
		row := store.Sample{RunID: r.ID, ProblemID: pid, SampleIndex: s.SampleIndex, Completion: s.Completion,
			FinishReason: s.FinishReason, CompletionTokens: s.CompletionTokens, FileCorrect: s.Correct,
			FileExtracted: s.Extracted, Status: store.SamplePending}
		if s.Correct != nil {
			fileLabel = true
			if !c.Reverify {
				row.Status, row.Extracted, row.Reason, row.VerdictSource = store.SampleIncorrect, s.Extracted, s.Reason, "file"
				if *s.Correct {
					row.Status = store.SampleCorrect
				}
			}
		}
		if row.Status == store.SamplePending {
			pending++
		}
		samples = append(samples, row)
		nSamples++
		bytesIn += len(s.Completion)
		if len(samples) >= batchRows || bytesIn >= batchBytes {
			return flushSamples()
		}
		return nil
	}
	onCount := func(k ingest.Count) error {
		pid, ok := ix.lookup(k.ProblemKey)
		if !ok {
			return unknown(up.Filename, k.Line, k.ProblemKey)
		}
		counts = append(counts, store.Count{RunID: r.ID, ProblemID: pid, N: k.N, C: k.C})
		nCounts++
		if len(counts) >= batchRows {
			err := tx.InsertCounts(ctx, counts)
			counts = counts[:0]
			tick("problems", nCounts)
			return err
		}
		return nil
	}
	if err := ingest.ReadSamples(cr, up.Filename, format, mapping, onSample, onCount); err != nil {
		return nil, err
	}
	if err := flushSamples(); err != nil {
		return nil, err
	}
	if len(counts) > 0 {
		if err := tx.InsertCounts(ctx, counts); err != nil {
			return nil, err
		}
	}
	if nSamples == 0 && nCounts == 0 {
		return nil, &ingest.Error{File: up.Filename, Line: 1, Msg: "no samples in the file"}
	}
	if err := tx.DeleteUpload(ctx, *r.UploadID); err != nil {
		return nil, err
	}

	prog.Done, prog.Status = up.Size, "done"
	if nCounts > 0 {
		prog.Detail = fmt.Sprintf("%d problems (counts only)", nCounts)
		_ = w.st.SetProgress(ctx, prog)
		if err := tx.SetRunImported(ctx, r.ID, string(format), false, "file"); err != nil {
			return nil, err
		}
		return nil, tx.SetRunStatus(ctx, r.ID, store.StatusReady, "")
	}
	prog.Detail = fmt.Sprintf("%d samples", nSamples)
	_ = w.st.SetProgress(ctx, prog)
	source := "file"
	if verified > 0 {
		pending -= verified
		_ = w.st.SetProgress(ctx, store.Progress{RunID: r.ID, Stage: "verify", Done: verified, Total: verified, Unit: "samples",
			Status: "done", Detail: fmt.Sprintf("%d samples verified by %s during the import", verified, w.v.Name())})
	}
	if verified > 0 && fileLabel && c.Reverify {
		if err := tx.SetVerdictsChanged(ctx, r.ID, changed); err != nil {
			return nil, err
		}
	}
	if verified > 0 || pending > 0 {
		source = "verifier"
		if fileLabel && !c.Reverify {
			source = "file+verifier"
		}
	}
	if err := tx.SetRunImported(ctx, r.ID, string(format), true, source); err != nil {
		return nil, err
	}
	if pending > 0 {
		if err := tx.SetProgress(ctx, store.Progress{RunID: r.ID, Stage: "verify", Total: pending, Unit: "samples", Status: "queued"}); err != nil {
			return nil, err
		}
		return VerifyArgs{RunID: r.ID, ComparisonID: c.ID}, tx.SetRunStatus(ctx, r.ID, store.StatusVerifying, "")
	}
	if err := tx.SetProgress(ctx, store.Progress{RunID: r.ID, Stage: "aggregate", Status: "queued"}); err != nil {
		return nil, err
	}
	return AggregateArgs{RunID: r.ID, ComparisonID: c.ID}, tx.SetRunStatus(ctx, r.ID, "aggregating", "")
}

// runFormat returns the format and mapping of a run's file: the confirmed
// ones stored on the run, else what Sniff guesses from the file's head.
func runFormat(ctx context.Context, tx *store.Store, r store.Run, up store.Upload) (ingest.Format, *ingest.Mapping, error) {
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
	head, err := tx.UploadHead(ctx, *r.UploadID, ingest.SniffBytes)
	if err != nil {
		return "", nil, err
	}
	return ingest.Sniff(head, up.Filename)
}

// gradeSamples verifies the batch's samples that have no verdict yet, on all
// cores, and returns how many it graded and how many of those differ from
// the file's label.
func gradeSamples(ctx context.Context, v verify.Verifier, ix problemIndex, batch []store.Sample) (graded, changed int64) {
	var todo []int
	for i := range batch {
		if batch[i].Status == store.SamplePending {
			todo = append(todo, i)
		}
	}
	onAllCores(len(todo), func(j int) {
		x := &batch[todo[j]]
		vd := v.Verify(ctx, ix.byID[x.ProblemID], x.Completion)
		x.Status, x.Extracted, x.Rule, x.Reason, x.VerdictSource = string(vd.Status), vd.Extracted, vd.Rule, vd.Reason, v.Name()
	})
	for _, i := range todo {
		if fc := batch[i].FileCorrect; fc != nil && *fc != (batch[i].Status == store.SampleCorrect) {
			changed++
		}
	}
	return int64(len(todo)), changed
}
