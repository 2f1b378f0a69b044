package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
)

// A large uploaded samples file (plain JSONL, at least two chunks' worth)
// is imported in chunks so that several workers, on any machines, share
// it and a killed worker loses one chunk rather than the whole import:
//
//  1. The run's import job reads the whole file once without verifying or
//     storing anything (a few seconds a GB: parsing is a small part of an
//     import), so a bad line anywhere fails the import before anything is
//     written. Every ChunkBytes it records a checkpoint: the line the
//     chunk starts at and the reader's and matcher's state there (line
//     number, records before, samples each problem has so far).
//  2. One ImportChunkArgs job per chunk reads its byte range from the
//     stored upload, resumed from its checkpoint, verifies on all cores
//     and COPYs, and commits its samples with its chunk marked done, in
//     one transaction. The chunk jobs of a comparison commit one at a
//     time (each locks the comparison first); the last one finishes the
//     run's import as a whole-file import would.
//
// Every sample gets exactly the problem, index and line it would get from a
// whole read (ingest.TestReadInParts); a failure anywhere fails the
// comparison and deletes every chunk's samples, as for a whole import.

// DefaultImportChunkBytes is the chunk size of a split import: large enough
// that the per-chunk work (the dataset, a transaction, a checkpoint) is
// noise, small enough that a 2 GB file keeps several workers busy.
const DefaultImportChunkBytes = 128 << 20

// chunkState is what a chunk job needs of the first pass: the reader's and
// the matcher's state where its chunk starts.
type chunkState struct {
	Read  ingest.ReadState  `json:"read"`
	Match ingest.MatchState `json:"match"`
}

// planChunks is the first pass over a run's stored file (inside tx): it
// reads and matches every sample, checks the file as a whole import does,
// stores the run's metadata and warnings and the chunks' checkpoints, and
// enqueues one ImportChunkArgs per chunk. It stores no sample.
func planChunks(ctx context.Context, st, tx *store.Store, c store.Comparison, r store.Run, up source,
	format ingest.Format, mapping *ingest.Mapping, ix problemIndex) (pipelineStats, error) {
	var sum pipelineStats
	f, err := up.open()
	if err != nil {
		return sum, fmt.Errorf("open %s: %w", up.name, err)
	}
	defer f.Close()
	cr := &countingReader{r: f}
	var seen atomic.Int64
	ctx, stopWatch, release := watchImport(ctx, st, c.ID, func() store.Progress {
		return store.Progress{RunID: r.ID, Stage: "import", Total: up.size, Done: cr.n.Load(), Unit: "bytes", Status: "running",
			Detail: fmt.Sprintf("checking the file before splitting it: %d samples", seen.Load())}
	})
	defer release()
	defer stopWatch()

	mt := ix.matcher(up.name)
	mt.GuardCompletions(format == ingest.FormatMapped)
	var (
		meta   *ingest.RunMeta
		warns  importWarnings
		chunks []store.ImportChunk
	)
	err = ingest.Read(cr, up.name, format, mapping, ingest.Options{
		CheckpointEvery: up.splitAt,
		OnCheckpoint: func(rs ingest.ReadState) error {
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			state, err := json.Marshal(chunkState{Read: rs, Match: mt.State()})
			if err != nil {
				return err
			}
			if n := len(chunks); n > 0 {
				chunks[n-1].End = rs.Offset
			}
			chunks = append(chunks, store.ImportChunk{Chunk: len(chunks) + 1, Start: rs.Offset, State: state})
			return nil
		},
		OnSample: func(s ingest.Sample) error {
			if _, err := mt.Resolve(&s); err != nil {
				return err
			}
			seen.Add(1)
			return nil
		},
		OnMeta:    func(m ingest.RunMeta) error { meta = &m; return nil },
		OnWarning: warns.add,
	})
	if err == nil {
		err = mt.Finish()
	}
	stopWatch()
	if errors.Is(context.Cause(ctx), errImportAborted) {
		return sum, errImportAborted
	}
	if err != nil {
		return sum, err
	}
	// Chunk 0 is the part before the first checkpoint: from the start, with
	// a fresh reader.
	first, _ := json.Marshal(chunkState{})
	end := up.size
	if len(chunks) > 0 {
		end = chunks[0].Start
		chunks[len(chunks)-1].End = up.size
	}
	chunks = append([]store.ImportChunk{{Chunk: 0, Start: 0, End: end, State: first}}, chunks...)
	if st, err := tx.LockComparisonStatus(ctx, c.ID); err != nil {
		return sum, err
	} else if st == store.StatusFailed {
		return sum, errImportAborted
	}
	if err := tx.SaveImportChunks(ctx, r.ID, chunks); err != nil {
		return sum, err
	}
	if err := warns.save(ctx, tx, r.ID, meta); err != nil {
		return sum, err
	}
	if err := tx.SetProgress(ctx, store.Progress{RunID: r.ID, Stage: "import", Total: up.size, Unit: "bytes", Status: "running",
		Detail: fmt.Sprintf("0 of %d samples · %d chunks queued", seen.Load(), len(chunks))}); err != nil {
		return sum, err
	}
	sum.samples, sum.chunks = seen.Load(), len(chunks)
	nos := make([]int, len(chunks))
	for i := range nos {
		nos[i] = i
	}
	return sum, enqueueChunks(ctx, tx, c, r, up, nos)
}

// enqueueChunks enqueues (inside tx) the jobs of chunks nos of run r's
// file; a chunk whose job is still unfinished is not enqueued twice.
func enqueueChunks(ctx context.Context, tx *store.Store, c store.Comparison, r store.Run, up source, nos []int) error {
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return fmt.Errorf("river client: %w", err)
	}
	params := make([]river.InsertManyParams, len(nos))
	for i, no := range nos {
		a := ImportChunkArgs{ComparisonID: c.ID, RunID: r.ID, Chunk: no}
		params[i] = river.InsertManyParams{Args: a}
		if up.local {
			// Only this process can read the file: its parts go into its
			// own queue, and a lost part fails the import (ReapWorker).
			a.Path, a.Holder = up.path, holderName
			params[i] = river.InsertManyParams{Args: a, InsertOpts: &river.InsertOpts{Queue: up.queue}}
		}
	}
	if _, err := client.InsertManyTx(ctx, tx.Tx(), params); err != nil {
		return fmt.Errorf("enqueue the parts of %s: %w", up.name, err)
	}
	return nil
}

// ImportChunkArgs imports one chunk of a run's split samples file.
type ImportChunkArgs struct {
	ComparisonID int64 `json:"comparison_id"`
	RunID        int64 `json:"run_id"`
	Chunk        int   `json:"chunk"`
	// Path and Holder, for a file on the disk of a `reach import` process
	// (as in ImportLocalArgs); empty for a stored upload.
	Path   string `json:"path,omitempty"`
	Holder string `json:"holder,omitempty"`
}

// Kind implements river.JobArgs.
func (ImportChunkArgs) Kind() string { return "import-chunk" }

// InsertOpts makes a second enqueue of an unfinished chunk a no-op.
func (ImportChunkArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: unfinished}}
}

// ImportChunkWorker works ImportChunkArgs.
type ImportChunkWorker struct {
	river.WorkerDefaults[ImportChunkArgs]
	st *store.Store
	v  verify.Verifier
}

// Timeout: a dead worker is noticed by its lease.
func (w *ImportChunkWorker) Timeout(*river.Job[ImportChunkArgs]) time.Duration { return longTimeout }

// Work imports the chunk in one transaction, marking it done in the same
// transaction; a chunk found done (an earlier attempt committed) or gone
// (the import failed or started over) is left alone.
func (w *ImportChunkWorker) Work(ctx context.Context, job *river.Job[ImportChunkArgs]) error {
	a := job.Args
	return importJob(ctx, w.st, w.v, job.Attempt >= job.MaxAttempts, a.ComparisonID, a.RunID,
		func(ctx context.Context, r store.Run) (source, error) {
			if a.Path != "" {
				return localSource(a.Path)
			}
			if r.UploadID == nil {
				return source{}, fmt.Errorf("model %q has no samples file: %w", r.ModelName, errBadInput)
			}
			return uploadSource(ctx, w.st, *r.UploadID)
		},
		func(ctx context.Context, tx *store.Store, c store.Comparison, r store.Run, up source) (pipelineStats, error) {
			return importChunk(ctx, w.st, tx, w.v, c, r, up, a.Chunk)
		})
}

// importChunk imports chunk no of run r inside tx and, when it is the
// run's last chunk to finish, finishes the run's import.
func importChunk(ctx context.Context, st, tx *store.Store, v verify.Verifier, c store.Comparison, r store.Run, up source, no int) (pipelineStats, error) {
	var sum pipelineStats
	if err := tx.LockImportChunk(ctx, r.ID, no); err != nil {
		return sum, err
	}
	ch, err := tx.GetImportChunk(ctx, r.ID, no)
	if errors.Is(err, store.ErrNotFound) {
		return sum, errChunkGone
	}
	if err != nil {
		return sum, err
	}
	if ch.Done {
		return sum, errChunkGone
	}
	var cs chunkState
	if err := json.Unmarshal(ch.State, &cs); err != nil {
		return sum, fmt.Errorf("import chunk %d of run %d: %w", no, r.ID, err)
	}
	format, mapping, err := runFormat(r, up)
	if err != nil {
		return sum, err
	}
	problems, err := tx.Problems(ctx, *c.DatasetID, true)
	if err != nil {
		return sum, err
	}
	ix := newProblemIndex(problems, c.DatasetName)
	// At most a few parts at once in a process (each holds a few batches
	// in memory), whatever its number of River workers.
	select {
	case chunkSlots <- struct{}{}:
		defer func() { <-chunkSlots }()
	case <-ctx.Done():
		return sum, ctx.Err()
	}
	in, err := up.openAt(ch.Start)
	if err != nil {
		return sum, fmt.Errorf("open %s at byte %d: %w", up.name, ch.Start, err)
	}
	defer in.Close()
	cr := &countingReader{r: io.LimitReader(in, ch.End-ch.Start)}

	var written atomic.Int64
	ctx, stopWatch, release := watchImport(ctx, st, c.ID, func() store.Progress {
		p := store.Progress{RunID: r.ID, Stage: "import", Total: up.size, Unit: "bytes", Status: "running"}
		read, stored, done, total, err := st.ImportChunksRead(ctx, r.ID, no, cr.n.Load(), written.Load())
		if err != nil {
			p.Done, p.Detail = cr.n.Load(), fmt.Sprintf("chunk %d: %d samples", no, written.Load())
			return p
		}
		p.Done, p.Detail = read, fmt.Sprintf("%d samples · %d of %d chunks done", stored, done, total)
		return p
	})
	defer release()
	defer stopWatch()

	mt := ix.matcher(up.name)
	mt.Resume(cs.Match)
	p := samplePipeline{v: v, ix: ix, mt: mt, reverify: c.Reverify, runID: r.ID, file: up.name}
	read := func(onSample func(ingest.Sample) error, onCount func(ingest.Count) error) error {
		// The first part too: its reader checks nothing the first pass
		// checked for the whole file (a first part of blank lines is no
		// "empty file").
		return ingest.Read(cr, up.name, format, mapping, ingest.Options{OnSample: onSample, OnCount: onCount, Resume: &cs.Read})
	}
	sum, err = p.run(ctx, read, func(b *batch) error {
		if err := tx.InsertSamples(ctx, b.samples); err != nil {
			return err
		}
		written.Add(int64(len(b.samples)))
		return nil
	})
	stopWatch()
	if errors.Is(context.Cause(ctx), errImportAborted) {
		return sum, errImportAborted
	}
	if err != nil {
		return sum, err
	}
	if st, err := tx.LockComparisonStatus(ctx, c.ID); err != nil {
		return sum, err
	} else if st == store.StatusFailed {
		return sum, errImportAborted
	}
	left, all, err := tx.FinishImportChunk(ctx, r.ID, no, store.ChunkTally{Samples: sum.samples, Verified: sum.verified,
		Pending: sum.pending, Changed: sum.changed, FileLabel: sum.fileLabel})
	if errors.Is(err, store.ErrNotFound) {
		return sum, errChunkGone
	}
	if err != nil {
		return sum, err
	}
	sum.chunks = 1
	if left > 0 {
		return sum, nil
	}
	// The run's last chunk: the run is imported.
	// (The first pass refused a file without samples.)
	sum = pipelineStats{samples: all.Samples, verified: all.Verified, pending: all.Pending, changed: all.Changed, fileLabel: all.FileLabel, runDone: true,
		stored: sum.stored, graded: sum.graded}
	return sum, finishRunImport(ctx, tx, v, c, r, up, format, sum)
}

// chunkSlots bounds the parts a process imports at once: two per core keep
// Postgres busy with several COPY streams (a split upload imported 16 %
// faster than whole on 2 cores) with memory bounded by a few batches each.
var chunkSlots = make(chan struct{}, 2*runtime.GOMAXPROCS(0))

// errChunkGone ends a chunk job whose chunk is done already (an earlier
// attempt committed) or no longer exists (the import failed, or started
// over and made new chunks).
var errChunkGone = errors.New("the chunk is done or gone")
