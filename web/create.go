package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/training"
	"github.com/reach-lab/reach/internal/verify/code"
	"github.com/reach-lab/reach/web/views"
)

// formError is a problem with what the user submitted (shown on the form).
type formError struct{ msg string }

func (e formError) Error() string { return e.msg }

// badForm is a form error. Its message is cut at 1,000 bytes: it may
// quote what the user sent, which can be long.
func badForm(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if len(msg) > 1000 {
		msg = strings.ToValidUTF8(msg[:1000], "") + " …"
	}
	return formError{msg}
}

type modelPart struct {
	name, role, file string
	step             *int
	uploadID         int64
	size             int64      // of the first file, bytes
	more             []moreFile // further files of the model (one per seed, repeat), pooled at import
}

type moreFile struct {
	name     string
	uploadID int64
	size     int64 // bytes
}

// received is a streamed "new comparison" submission.
type received struct {
	name            string
	datasetID       int64
	datasetUploadID int64
	datasetFile     string
	reverify        bool
	codeHarness     string
	models          []*modelPart
	projectID       int64  // project_id field; 0 = not given
	projectName     string // project field (a name)
}

func (rc *received) uploads() []int64 {
	var ids []int64
	if rc.datasetUploadID != 0 {
		ids = append(ids, rc.datasetUploadID)
	}
	for _, m := range rc.models {
		if m.uploadID != 0 {
			ids = append(ids, m.uploadID)
		}
		for _, f := range m.more {
			ids = append(ids, f.uploadID)
		}
	}
	return ids
}

// receive streams a multipart submission part by part: files go straight
// into upload chunks, so no file is ever held whole in memory. Fields are
// read in form order: each model_role starts a new model, and the
// model_name, model_step and model_file after it belong to that model.
func (s *Server) receive(ctx context.Context, r *http.Request) (*received, error) {
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, badForm("expected a multipart/form-data upload: %v", err)
	}
	rc := &received{}
	last := func(field string) (*modelPart, error) {
		if len(rc.models) == 0 {
			return nil, badForm("field %s comes before any model_role field", field)
		}
		return rc.models[len(rc.models)-1], nil
	}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return rc, badForm("reading the upload: %v", err)
		}
		field := part.FormName()
		if part.FileName() != "" || field == "dataset_file" || field == "model_file" {
			if err := s.receiveFile(ctx, rc, field, part, last); err != nil {
				return rc, err
			}
			continue
		}
		b, err := io.ReadAll(io.LimitReader(part, maxFieldBytes+1))
		if err != nil {
			return rc, badForm("reading field %s: %v", field, err)
		}
		if len(b) > maxFieldBytes {
			return rc, badForm("field %s is over %d KiB", field, maxFieldBytes>>10)
		}
		v := strings.TrimSpace(string(b))
		switch field {
		case "name":
			rc.name = v
		case "dataset_id":
			if v != "" {
				if rc.datasetID, err = strconv.ParseInt(v, 10, 64); err != nil {
					return rc, badForm("dataset_id %q is not a number", v)
				}
			}
		case "reverify":
			rc.reverify = v != "" && v != "0" && v != "false"
		case "code_harness":
			if !code.ValidHarness(v) {
				return rc, badForm("code harness %q: use %s", v, code.HarnessNames())
			}
			rc.codeHarness = v
		case "project_id":
			if v != "" {
				if rc.projectID, err = strconv.ParseInt(v, 10, 64); err != nil {
					return rc, badForm("project_id %q is not a number", v)
				}
			}
		case "project":
			rc.projectName = v
		case "model_role":
			switch v {
			case "base", "rl", "checkpoint", "distilled":
			default:
				return rc, badForm("model role %q: use base, rl, checkpoint or distilled", v)
			}
			if len(rc.models) == intake.MaxModels {
				return rc, badForm("a comparison has at most %d models (the base model included): split them into several comparisons or a collection", intake.MaxModels)
			}
			rc.models = append(rc.models, &modelPart{role: v})
		case "model_name":
			m, err := last(field)
			if err != nil {
				return rc, err
			}
			m.name = v
		case "model_step":
			m, err := last(field)
			if err != nil {
				return rc, err
			}
			if v != "" {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 || n > math.MaxInt32 {
					return rc, badForm("model %q: step %q: want a whole number from 0 to %d", m.name, v, math.MaxInt32)
				}
				m.step = &n
			}
		}
	}
	return rc, nil
}

func (s *Server) receiveFile(ctx context.Context, rc *received, field string, part *multipart.Part, last func(string) (*modelPart, error)) error {
	fname := filepath.Base(part.FileName())
	if part.FileName() == "" {
		_, _ = io.Copy(io.Discard, part) // an empty file input
		return nil
	}
	switch field {
	case "dataset_file":
		id, _, err := s.st.SaveUpload(ctx, fname, part, s.cfg.MaxUploadBytes)
		if err != nil {
			return uploadErr(err)
		}
		rc.datasetUploadID, rc.datasetFile = id, fname
	case "model_file":
		m, err := last(field)
		if err != nil {
			return err
		}
		id, size, err := s.st.SaveUpload(ctx, fname, part, s.cfg.MaxUploadBytes)
		if err != nil {
			return uploadErr(err)
		}
		if m.uploadID != 0 { // several files of one model (one per seed, repeat): pooled at import
			m.more = append(m.more, moreFile{name: fname, uploadID: id, size: size})
			return nil
		}
		m.uploadID, m.file, m.size = id, fname, size
	default:
		return badForm("unexpected file field %q", field)
	}
	return nil
}

// bothDatasets refuses a form that names a loaded dataset and uploads a
// dataset file (%q: the file's name): which one was meant is not Reach's
// guess to make.
const bothDatasets = "a loaded dataset is chosen and a dataset file (%q) is uploaded: choose one (set \"Use a loaded dataset\" to \"upload a file instead\" to use the file)"

func uploadErr(err error) error {
	if errors.Is(err, store.ErrTooLarge) {
		return formError{err.Error()}
	}
	return err
}

// validate checks a submission and sniffs each samples file's format.
// It returns the comparison to create.
func (s *Server) validate(ctx context.Context, u *store.User, rc *received) (store.NewComparison, error) {
	nc := store.NewComparison{Name: rc.name, Reverify: rc.reverify, Status: store.StatusPending}
	if rc.name == "" {
		return nc, badForm("give the comparison a name")
	}
	if err := firstTooLong(lenCheck{"Comparison name", rc.name, maxName}, lenCheck{"Project", rc.projectName, maxName}); err != nil {
		return nc, err
	}
	switch {
	case rc.datasetUploadID != 0 && rc.datasetID != 0:
		return nc, badForm(bothDatasets, rc.datasetFile)
	case rc.datasetUploadID != 0:
		nc.DatasetUploadID = rc.datasetUploadID
		nc.DatasetID = 0
	case rc.datasetID != 0:
		if err := s.useDataset(ctx, u, rc.datasetID); err != nil {
			return nc, err
		}
		nc.DatasetID = rc.datasetID
	default:
		return nc, badForm("choose a loaded dataset or upload a dataset file")
	}
	if len(rc.models) < 2 {
		return nc, badForm("a comparison needs a base model and at least one other model (got %d)", len(rc.models))
	}
	seen := map[string]bool{}
	for i, m := range rc.models {
		if (i == 0) != (m.role == "base") {
			return nc, badForm("the first model must be the base model, and only the first")
		}
		if m.name == "" {
			return nc, badForm("model %d has no name", i+1)
		}
		if err := tooLong(fmt.Sprintf("Model %d's name", i+1), m.name, maxName); err != nil {
			return nc, err
		}
		if seen[m.name] {
			return nc, badForm("two models are named %q", m.name)
		}
		seen[m.name] = true
		if m.uploadID == 0 {
			return nc, badForm("model %q has no samples file", m.name)
		}
		if len(m.more) > 0 { // a stable order whatever order the browser sent them in: by name
			all := append([]moreFile{{name: m.file, uploadID: m.uploadID, size: m.size}}, m.more...)
			slices.SortStableFunc(all, func(a, b moreFile) int { return strings.Compare(a.name, b.name) })
			m.file, m.uploadID, m.size, m.more = all[0].name, all[0].uploadID, all[0].size, all[1:]
			ups := make([]intake.Upload, len(all))
			for j, f := range all {
				id := f.uploadID
				ups[j] = intake.Upload{Name: f.name, Size: f.size, Open: func() (io.ReadCloser, error) { return io.NopCloser(s.st.OpenUpload(ctx, id)), nil }}
			}
			if err := intake.IdenticalFiles(m.name, ups); err != nil {
				return nc, badForm("%v", err)
			}
		}
		ex, err := ingest.Examine(s.st.OpenUpload(ctx, m.uploadID), m.file)
		var ie *ingest.Error
		if errors.As(err, &ie) {
			return nc, badForm("model %q: %v", m.name, err)
		} else if err != nil {
			return nc, err
		}
		format, mapping := ex.Format, ex.Mapping
		names := []string{m.file}
		for _, f := range m.more { // read as the first file is: one layout for all
			mex, err := ingest.Examine(s.st.OpenUpload(ctx, f.uploadID), f.name)
			if errors.As(err, &ie) {
				return nc, badForm("model %q: %v (one of its %d files: give only the samples files)", m.name, err, len(m.more)+1)
			} else if err != nil {
				return nc, err
			}
			if mex.Format != format {
				return nc, badForm("model %q: %s is %s, but %s is %s: one model's files must share one layout", m.name, f.name,
					ingest.Describe(mex.Format), m.file, ingest.Describe(format))
			}
			names = append(names, f.name)
		}
		if format == ingest.FormatCountsCSV {
			// One row per problem: read every row now, so that a bad one (c > n,
			// n = 0, a problem twice) is refused with the form, not after the
			// comparison is queued (each file error is final anyway).
			files := append([]moreFile{{name: m.file, uploadID: m.uploadID}}, m.more...)
			for _, f := range files {
				err := ingest.ReadSamples(s.st.OpenUpload(ctx, f.uploadID), f.name, format, nil, nil, func(ingest.Count) error { return nil })
				if errors.As(err, &ie) {
					return nc, badForm("model %q: %v", m.name, err)
				} else if err != nil {
					return nc, err
				}
			}
		}
		runs, err := modelRuns(m, names, rc.codeHarness)
		if err != nil {
			return nc, err
		}
		for _, run := range runs {
			if format == ingest.FormatMapped {
				nc.Status = store.StatusNeedsMapping
				run.Mapping = mapping
			} else {
				run.Format = string(format)
			}
			// One file whose records carry the training step: a checkpoint per step.
			upload := run.UploadID
			split, err := intake.SplitSteps(run, 1+len(run.MoreUploadIDs), func() (io.ReadCloser, error) { return io.NopCloser(s.st.OpenUpload(ctx, upload)), nil }, len(nc.Runs))
			if err != nil && ctx.Err() == nil {
				return nc, badForm("%v", err)
			} else if err != nil {
				return nc, err
			}
			nc.Runs = append(nc.Runs, split...)
		}
	}
	seenRun := map[string]bool{}
	for _, run := range nc.Runs {
		if seenRun[run.ModelName] {
			return nc, badForm("two models are named %q (a training step's checkpoint is named NAME step N): rename one", run.ModelName)
		}
		seenRun[run.ModelName] = true
	}
	if len(nc.Runs) > intake.MaxModels {
		return nc, badForm("a comparison has at most %d models (the base model included); these files give %d with every training step a checkpoint: split them into several comparisons",
			intake.MaxModels, len(nc.Runs))
	}
	return nc, nil
}

// modelRuns turns one model of the form into its runs: one, or, when its
// files are a training run's (their names give two or more training steps,
// as trainers write them: training.Split), one checkpoint per step.
func modelRuns(m *modelPart, names []string, harness string) ([]store.NewRun, error) {
	ids := map[string]int64{m.file: m.uploadID}
	for _, f := range m.more {
		ids[f.name] = f.uploadID
	}
	cks, err := training.Split("", names)
	if err != nil {
		return nil, badForm("model %q: %v", m.name, err)
	}
	if cks == nil {
		if m.role == "checkpoint" && m.step == nil {
			return nil, badForm("model %q is an RL checkpoint without a training step: give its step, or choose \"RL model\" (a checkpoint without a step has no place on the trajectory)", m.name)
		}
		run := store.NewRun{ModelName: m.name, Role: m.role, Step: m.step, UploadID: m.uploadID, SourceFile: intake.SourceFiles(names),
			CodeHarness: harness}
		for _, f := range m.more {
			run.MoreUploadIDs = append(run.MoreUploadIDs, f.uploadID)
		}
		return []store.NewRun{run}, nil
	}
	if m.role == "base" {
		return nil, badForm("base model %q: its files name %d training steps (%d to %d); the base model is one model: add the checkpoints as another model",
			m.name, len(cks), cks[0].Step, cks[len(cks)-1].Step)
	}
	var runs []store.NewRun
	for _, ck := range cks {
		step := ck.Step
		run := store.NewRun{ModelName: fmt.Sprintf("%s step %d", m.name, step), Role: "checkpoint", Step: &step, UploadID: ids[ck.Files[0]],
			SourceFile: intake.SourceFiles(ck.Files), CodeHarness: harness}
		for _, f := range ck.Files[1:] {
			run.MoreUploadIDs = append(run.MoreUploadIDs, ids[f])
		}
		runs = append(runs, run)
	}
	return runs, nil
}

// created is what create made: the new comparison's id, name and status.
type created struct {
	id           int64
	name, status string
}

// create receives, validates and stores a submission and enqueues its
// import (unless a field mapping must be confirmed first). On any error the
// files received so far are deleted.
func (s *Server) create(ctx context.Context, r *http.Request) (created, error) {
	c, _, err := s.createFrom(ctx, r)
	return c, err
}

// createFrom is create that also returns what the submission said (nil
// when nothing could be read), for a form shown again after a refusal.
func (s *Server) createFrom(ctx context.Context, r *http.Request) (created, *received, error) {
	rc, err := s.receive(ctx, r)
	cleanup := func() {
		if rc == nil {
			return
		}
		for _, id := range rc.uploads() {
			_ = s.st.DeleteUpload(context.WithoutCancel(ctx), id)
		}
	}
	if err != nil {
		cleanup()
		return created{}, rc, err
	}
	nc, err := s.validate(ctx, currentUser(r), rc)
	if err == nil {
		nc.ProjectID, err = s.targetProject(ctx, currentUser(r), rc.projectID, rc.projectName)
	}
	if err != nil {
		cleanup()
		return created{}, rc, err
	}
	var id int64
	err = s.st.WithTx(ctx, func(tx *store.Store) error {
		var err error
		if id, err = tx.CreateComparison(ctx, nc); err != nil {
			return err
		}
		if nc.Status == store.StatusPending {
			return jobs.StartImport(ctx, s.jobs, tx, id)
		}
		return nil
	})
	if err != nil {
		cleanup()
		return created{}, rc, err
	}
	return created{id, nc.Name, nc.Status}, rc, nil
}

func (s *Server) newComparison(w http.ResponseWriter, r *http.Request) {
	s.renderNewForm(w, r, http.StatusOK, "")
}

func (s *Server) renderNewForm(w http.ResponseWriter, r *http.Request, status int, msg string) {
	s.renderNewFormWith(w, r, status, views.NewForm{Error: msg})
}

// renderNewFormWith shows the form with f's entries (Error, and what a
// refused submission had filled in).
func (s *Server) renderNewFormWith(w http.ResponseWriter, r *http.Request, status int, f views.NewForm) {
	u := currentUser(r)
	ds, err := s.st.ListDatasetsFor(r.Context(), u.ID, u.IsAdmin)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ps, err := s.editableProjects(r.Context(), u)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f.Datasets, f.MaxMiB, f.Projects = ds, s.cfg.MaxUploadBytes>>20, ps
	s.render(w, r, status, views.NewComparison(f))
}

func (s *Server) createComparison(w http.ResponseWriter, r *http.Request) {
	c, rc, err := s.createFrom(r.Context(), r)
	var fe formError
	if errors.As(err, &fe) {
		f := views.NewForm{Error: fe.msg}
		if rc != nil {
			f.Name, f.Reverify, f.Harness, f.DatasetID, f.ProjectID = rc.name, rc.reverify, rc.codeHarness, rc.datasetID, rc.projectID
			for _, m := range rc.models {
				f.ModelNames = append(f.ModelNames, m.name)
			}
		}
		s.renderNewFormWith(w, r, http.StatusBadRequest, f)
		return
	}
	if errors.Is(err, errForbidden) {
		s.deny(w, r, http.StatusForbidden, "Your role in that project does not allow adding comparisons.")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	target := fmt.Sprintf("/comparisons/%d", c.id)
	if c.status == store.StatusNeedsMapping {
		target += "/mapping"
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}
