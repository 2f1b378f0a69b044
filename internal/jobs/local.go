package jobs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/riverqueue/river"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify"
)

// ImportLocalArgs imports one model's samples file straight from the disk
// of the `reach import` process that enqueued it: no copy of the file is
// stored first. The job goes into a queue only that process works
// (LocalQueue), so it is visible in River and on the progress page like
// any import, and a lost process is noticed by its lease (the reaper then
// fails the comparison, since no other worker can read the file).
type ImportLocalArgs struct {
	ComparisonID int64  `json:"comparison_id"`
	RunID        int64  `json:"run_id"`
	Path         string `json:"path"`   // absolute, on Holder's machine
	Holder       string `json:"holder"` // host:pid of the process that reads it
	// More are the model's further files (one per seed, repeat, ...), read after Path in this
	// order and pooled with it per problem (ingest.Matcher.NextFile).
	More []string `json:"more,omitempty"`
}

// Kind implements river.JobArgs.
func (ImportLocalArgs) Kind() string { return "import-local" }

// InsertOpts: a transient database error is retried in the same process.
func (ImportLocalArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: unfinished}}
}

// ImportLocalWorker works ImportLocalArgs.
type ImportLocalWorker struct {
	river.WorkerDefaults[ImportLocalArgs]
	st      *store.Store
	v       verify.Verifier
	writers int // as ImportRunWorker's
}

// Timeout as for an uploaded file.
func (w *ImportLocalWorker) Timeout(*river.Job[ImportLocalArgs]) time.Duration { return longTimeout }

// Work imports the local file in one transaction, as ImportRunWorker does
// an uploaded one.
func (w *ImportLocalWorker) Work(ctx context.Context, job *river.Job[ImportLocalArgs]) error {
	a := job.Args
	return importJob(ctx, w.st, w.v, job.Attempt >= job.MaxAttempts, a.ComparisonID, a.RunID, func(context.Context, store.Run) (source, error) {
		// Not split into parts: only this process can read the file, so
		// parts would only read it twice (the first pass, then each part).
		// It is read once and COPYed by several transactions at once.
		up, err := localSource(a.Path)
		up.writers, up.queue = w.writers, job.Queue
		for _, p := range a.More {
			if err != nil {
				break
			}
			var more source
			more, err = localSource(p)
			up.more = append(up.more, more)
			up.size += more.size
		}
		return up, err
	}, nil)
}

// localSource reads a file on this machine.
func localSource(path string) (source, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return source{local: true, name: filepath.Base(path)}, fmt.Errorf("%w: %w", err, errBadInput)
	}
	return source{name: filepath.Base(path), size: fi.Size(), local: true, path: path,
		open: func() (io.ReadCloser, error) { return os.Open(path) },
		openAt: func(off int64) (io.ReadCloser, error) {
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			if _, err := f.Seek(off, io.SeekStart); err != nil {
				f.Close()
				return nil, err
			}
			return f, nil
		},
		head: func(n int) ([]byte, error) {
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			buf := make([]byte, n)
			k, err := io.ReadFull(f, buf)
			if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
				return nil, err
			}
			return buf[:k], nil
		}}, nil
}

// NewLocalQueue returns a River queue name of its own for one `reach
// import` process (Config.LocalQueue): only that process works it.
func NewLocalQueue() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "local_" + hex.EncodeToString(b)
}

// StartLocalImport starts, inside tx, the import of a comparison created
// with its dataset loaded (store.NewComparison.DatasetID set) whose
// samples files are on this machine: paths maps each imported run to its
// file's absolute path. Every run is marked importing with a queued
// progress bar, and its ImportLocalArgs job goes into queue, which the
// caller's client must work (Config.LocalQueue). Runs split off another's
// file (store.Run.SplitOf) have no path: they are marked importing, and
// that run's import stores their samples.
func StartLocalImport(ctx context.Context, client *Client, tx *store.Store, comparisonID int64, queue string, paths map[int64][]string) error {
	if queue == "" {
		return errors.New("local import: no queue")
	}
	if err := tx.SetComparisonStatus(ctx, comparisonID, store.StatusImporting, ""); err != nil {
		return err
	}
	var params []river.InsertManyParams
	for runID, files := range paths {
		if len(files) == 0 {
			return fmt.Errorf("local import: run %d has no file", runID)
		}
		for _, path := range files {
			if !filepath.IsAbs(path) {
				return fmt.Errorf("local import: %q is not an absolute path", path)
			}
		}
		if err := tx.SetRunStatus(ctx, runID, store.StatusImporting, ""); err != nil {
			return err
		}
		if err := tx.SetProgress(ctx, store.Progress{RunID: runID, Stage: "import", Unit: "bytes", Status: "queued"}); err != nil {
			return err
		}
		params = append(params, river.InsertManyParams{Args: ImportLocalArgs{ComparisonID: comparisonID, RunID: runID, Path: files[0], More: files[1:], Holder: holderName},
			InsertOpts: &river.InsertOpts{Queue: queue}})
	}
	c, err := tx.GetComparison(ctx, comparisonID)
	if err != nil {
		return err
	}
	for _, r := range c.Runs {
		if r.SplitOf != nil && r.Status == store.StatusPending {
			if err := markSplitImporting(ctx, tx, r); err != nil {
				return err
			}
		}
	}
	if _, err := client.InsertManyTx(ctx, tx.Tx(), params); err != nil {
		return fmt.Errorf("enqueue the import of comparison %d: %w", comparisonID, err)
	}
	return nil
}

// FailLocalImport fails a comparison whose local import this process
// gives up (interrupted): nothing of its runs is kept.
func FailLocalImport(ctx context.Context, st *store.Store, comparisonID int64, reason error) {
	failImport(ctx, st, comparisonID, 0, reason, true)
}
