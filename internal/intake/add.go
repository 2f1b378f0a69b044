package intake

import (
	"context"
	"fmt"
	"io"

	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
)

// AddModels adds models (checkpoints of a training run, say) to comparison
// id: their files are stored as uploads and examined as Create examines
// them, then the runs are added and the comparison's import job enqueued in
// one transaction; the comparison is importing until they are in, and its
// other models keep their samples. Errors: the limit on models (MaxModels),
// a name the comparison has, a file refused by Examine (nothing is stored
// then), or the store's.
func AddModels(ctx context.Context, st *store.Store, client *jobs.Client, id int64, models []Model, acceptGuess bool) (Mapped, error) {
	c, err := st.GetComparison(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := checkModelCount(len(c.Runs) + len(models)); err != nil {
		return nil, err
	}
	var uploads []int64
	cleanup := func() {
		for _, u := range uploads {
			_ = st.DeleteUpload(context.WithoutCancel(ctx), u)
		}
	}
	save := func(f File) (int64, error) {
		r, err := f.Open()
		if err != nil {
			return 0, fmt.Errorf("open %s: %w", f.Name, err)
		}
		defer r.Close()
		u, _, err := st.SaveUpload(ctx, f.Name, r, 0)
		if err != nil {
			return 0, err
		}
		uploads = append(uploads, u)
		return u, nil
	}
	mapped := Mapped{}
	var runs []store.NewRun
	for _, m := range models {
		u, err := save(m.File)
		if err != nil {
			cleanup()
			return nil, err
		}
		run, err := describe(len(c.Runs), m, st.OpenUpload(ctx, u), acceptGuess, mapped)
		if err != nil {
			cleanup()
			return nil, err
		}
		if err := sameLayout(m, run.Format); err != nil {
			cleanup()
			return nil, err
		}
		for _, f := range m.More {
			more, err := save(f)
			if err != nil {
				cleanup()
				return nil, err
			}
			run.MoreUploadIDs = append(run.MoreUploadIDs, more)
		}
		run.UploadID = u
		split, err := SplitSteps(run, 1+len(m.More), func() (io.ReadCloser, error) { return io.NopCloser(st.OpenUpload(ctx, u)), nil }, len(runs))
		if err != nil {
			cleanup()
			return nil, err
		}
		runs = append(runs, split...)
	}
	if err := checkModelCount(len(c.Runs) + len(runs)); err != nil {
		cleanup()
		return nil, fmt.Errorf("with every training step a checkpoint: %w", err)
	}
	err = st.WithTx(ctx, func(tx *store.Store) error {
		if err := tx.AddRuns(ctx, id, runs); err != nil {
			return err
		}
		return jobs.StartImport(ctx, client, tx, id)
	})
	if err != nil {
		cleanup()
		return nil, err
	}
	return mapped, nil
}
