package follow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
)

// A comparison follows a server folder from the browser with one job that
// looks at the folder, adds what is complete, and snoozes for the follow's
// interval (River does not count a snooze as an attempt), until the follow
// is stopped. It runs in the Queue queue, which `reach serve` (with
// workers) and `reach worker` work: every such process must see the
// allowed folders at the same paths.

// Queue is the River queue of folder-following jobs.
const Queue = "follow"

// DefaultEvery is how often a followed folder is looked at, and how long a
// step file must stay unchanged before it is read.
const DefaultEvery = 30 * time.Second

// Args looks at a followed folder once, then again every interval.
type Args struct {
	FollowID int64 `json:"follow_id"`
}

// Kind implements river.JobArgs.
func (Args) Kind() string { return "follow-folder" }

// InsertOpts: one job per follow; a failed look is tried again.
func (Args) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Queue, MaxAttempts: 25, UniqueOpts: river.UniqueOpts{ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
			rivertype.JobStateRunning, rivertype.JobStateScheduled}}}
}

// Worker works Args.
type Worker struct {
	river.WorkerDefaults[Args]
	st *store.Store
}

// Register adds the folder follower to a River client's workers
// (jobs.Config.Register).
func Register(st *store.Store) func(*river.Workers) {
	return func(w *river.Workers) { river.AddWorker(w, &Worker{st: st}) }
}

// Timeout: a look copies at most a few step files into uploads.
func (w *Worker) Timeout(*river.Job[Args]) time.Duration { return 30 * time.Minute }

// Work looks at the folder once (State.Look: it adds each new complete
// step as a checkpoint "MODEL step N", one a look, and keeps each step
// that failed as the follow's last error until it goes in). The follow
// stops by itself when its comparison failed or the folder left the
// allowed ones.
func (w *Worker) Work(ctx context.Context, job *river.Job[Args]) error {
	f, err := w.st.GetFollow(ctx, job.Args.FollowID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if f.StoppedAt != nil {
		return nil
	}
	stop := func(reason string) error {
		slog.Info("stopped following a folder", "comparison", f.ComparisonID, "path", f.Path, "why", reason)
		_, err := w.st.StopFollow(ctx, f.ComparisonID, reason)
		return err
	}
	roots, err := Roots(ctx, w.st)
	if err != nil {
		return err
	}
	dir, err := Resolve(roots, f.Path)
	if err != nil {
		return stop("stopped: " + err.Error())
	}
	c, err := w.st.GetComparison(ctx, f.ComparisonID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if c.Status == store.StatusFailed {
		return stop("stopped: the comparison failed")
	}
	var state State
	if len(f.State) > 0 {
		if err := json.Unmarshal(f.State, &state); err != nil {
			state = State{} // an unreadable state is only a fresh look
		}
	}
	client, err := river.ClientFromContextSafely[pgx.Tx](ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	out, err := state.Look(ctx, w.st, client, Run{ComparisonID: f.ComparisonID, Model: f.ModelName, Arg: dir, Root: dir, Every: f.Every, Roots: roots}, now)
	if err != nil {
		return err
	}
	for _, step := range out.In {
		slog.Info("followed folder: step added", "comparison", f.ComparisonID, "step", step, "path", dir)
	}
	for _, fs := range out.Failed {
		slog.Info("followed folder: step not added", "comparison", f.ComparisonID, "step", fs.Step, "path", dir, "error", fs.Error)
	}
	b, err := json.Marshal(state)
	if err != nil {
		return err
	}
	if err := w.st.SaveFollowScan(ctx, f.ID, b, now, state.Summary(out.ScanErr)); err != nil {
		return err
	}
	return river.JobSnooze(f.Every)
}

// readable reads a step file through as its import will, storing nothing:
// a file that is not whole (a trainer that died mid-write, then left it)
// is refused here, as the follow's last error, rather than failing the
// comparison's import, which would keep nothing of the comparison.
func readable(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	ex, err := ingest.Examine(f, filepath.Base(path))
	if err != nil || ex.Format == ingest.FormatMapped {
		return err // a guessed layout is refused by AddModels in words
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	return ingest.Read(f, filepath.Base(path), ex.Format, nil, ingest.Options{
		OnSample: func(ingest.Sample) error { return nil }, OnCount: func(ingest.Count) error { return nil }})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + " …"
}

// Roots returns the server folders an admin allows to be followed (none:
// following is off).
func Roots(ctx context.Context, st *store.Store) ([]string, error) {
	text, _, err := st.Setting(ctx, store.SettingFollowRoots)
	if err != nil {
		return nil, err
	}
	roots, err := ParseRoots(text)
	if err != nil {
		return nil, fmt.Errorf("the allowed server folders: %w", err)
	}
	return roots, nil
}

// RootsText returns the setting's text as the admin wrote it.
func RootsText(ctx context.Context, st *store.Store) (string, error) {
	text, _, err := st.Setting(ctx, store.SettingFollowRoots)
	return text, err
}

// SaveRoots checks text (ParseRoots) and stores it as the allowed
// folders, recording userID. Nothing is stored on an error.
func SaveRoots(ctx context.Context, st *store.Store, text string, userID int64) error {
	if _, err := ParseRoots(text); err != nil {
		return err
	}
	return st.SetSetting(ctx, store.SettingFollowRoots, text, userID)
}

// Start makes comparison id follow the folder path (which must resolve
// inside an allowed folder) for model's checkpoints, looking every
// interval, and enqueues its job, in one transaction. Errors: Resolve's,
// store.ErrFollowing, the store's.
func Start(ctx context.Context, st *store.Store, client *jobs.Client, id int64, model, path string, every time.Duration, userID int64) error {
	roots, err := Roots(ctx, st)
	if err != nil {
		return err
	}
	dir, err := Resolve(roots, path)
	if err != nil {
		return err
	}
	return st.WithTx(ctx, func(tx *store.Store) error {
		fid, err := tx.CreateFollow(ctx, id, model, dir, every, userID)
		if err != nil {
			return err
		}
		if _, err := client.InsertTx(ctx, tx.Tx(), Args{FollowID: fid}, nil); err != nil {
			return fmt.Errorf("enqueue the follow of %s: %w", dir, err)
		}
		return nil
	})
}
