// Package intake creates a comparison from local files (the CLI's
// `reach import` and the shipped example). Create stores each file as an
// upload, sniffs its format and enqueues the same ImportJob the browser
// form does; CreateLocal leaves the samples files where they are and has
// the calling process import them straight from its disk.
package intake

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/sampling"
	"github.com/reach-lab/reach/internal/secret"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/verify/code"
)

// File is a named source of bytes.
type File struct {
	Name string // shown to the user, e.g. "test.jsonl"
	Open func() (io.ReadCloser, error)
	Path string // on this machine's disk ("" when not a local file)
}

// LocalFile opens a file on disk.
func LocalFile(path string) File {
	return File{Name: filepath.Base(path), Path: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

// Model is one model's samples file.
type Model struct {
	Name string
	Role string // base | rl | checkpoint | distilled
	Step *int
	File File
	// More are the model's further files (one per seed, repeat, ...), pooled with File per problem
	// in this order.
	More []File
	// Mapping, when set, reads the file as the "mapped" format with these
	// fields instead of sniffing its layout.
	Mapping *ingest.Mapping
	// CodeHarness is how the code verifier turns these completions into
	// programs ("" = human-eval's; see verify/code.Harnesses).
	CodeHarness string
}

// Spec describes a comparison to create. Models[0] is the base model.
type Spec struct {
	Name       string
	SourceNote string
	Dataset    File
	DatasetID  int64 // use a loaded dataset instead of Dataset
	Models     []Model
	Reverify   bool
	ProjectID  int64 // 0: the default project
	// AcceptGuess reads files in an unrecognised layout with the guessed
	// field mapping. Without it such a file is refused (a *GuessError naming
	// the guess), since a wrong guess gives figures that look right.
	AcceptGuess bool
}

// Mapped reports, per model name, the field mapping that was guessed for a
// file in an unrecognised format (the CLI prints it); mappings the caller
// gave are not repeated.
type Mapped map[string]ingest.Mapping

// GuessError refuses a file in an unrecognised layout that has no mapping:
// it carries the guess, for the user to check and pass back.
type GuessError struct {
	Model, File string
	Guess       ingest.Mapping
}

func (e *GuessError) Error() string {
	return fmt.Sprintf("model %q: %s is in no layout Reach recognises; its guessed field mapping is %s. Check it against the file, then pass it with --map (or accept it with --accept-guess)",
		e.Model, e.File, FormatMapping(e.Guess))
}

// MaxModels is the most models one comparison may have (the base model
// included). Every page and figure is drawn for that many, the UpSet chart's
// intersections included; more is refused before anything is stored.
const MaxModels = 64

func checkModelCount(n int) error {
	switch {
	case n < 2:
		return fmt.Errorf("a comparison needs a base model and at least one other model (got %d)", n)
	case n > MaxModels:
		return fmt.Errorf("a comparison has at most %d models (the base model included); got %d: split them into several comparisons or a collection", MaxModels, n)
	}
	return nil
}

// Create stores the files and enqueues the import. Files in an unknown
// layout are refused unless the model has a Mapping or spec.AcceptGuess is
// set (then the guessed mapping is used and returned in Mapped).
// On error nothing is kept.
// check refuses a spec no comparison can be made of, before anything is
// stored: no name, fewer than two models, a model without a name or two
// with one name (each model's name identifies its run).
func (spec Spec) check() error {
	if spec.Name == "" {
		return errors.New("the comparison needs a name")
	}
	if err := checkModelCount(len(spec.Models)); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, m := range spec.Models {
		if m.Name == "" {
			return fmt.Errorf("model %d has no name", i+1)
		}
		if seen[m.Name] {
			return fmt.Errorf("two models are named %q: give each model its own name", m.Name)
		}
		seen[m.Name] = true
		if m.Role == "checkpoint" && m.Step == nil {
			return fmt.Errorf("model %q is an RL checkpoint without a training step: give its step (--step N after its --model) or make it an RL model", m.Name)
		}
	}
	return nil
}

func Create(ctx context.Context, st *store.Store, client *jobs.Client, spec Spec) (int64, Mapped, error) {
	if err := spec.check(); err != nil {
		return 0, nil, err
	}
	var uploads []int64
	cleanup := func() {
		for _, id := range uploads {
			_ = st.DeleteUpload(context.WithoutCancel(ctx), id)
		}
	}
	sizes := map[int64]int64{}
	save := func(f File) (int64, error) {
		r, err := f.Open()
		if err != nil {
			return 0, fmt.Errorf("open %s: %w", f.Name, err)
		}
		defer r.Close()
		id, size, err := st.SaveUpload(ctx, f.Name, r, 0)
		if err != nil {
			return 0, err
		}
		uploads = append(uploads, id)
		sizes[id] = size
		return id, nil
	}
	stored := func(name string, id int64) Upload {
		return Upload{Name: name, Size: sizes[id], Open: func() (io.ReadCloser, error) { return io.NopCloser(st.OpenUpload(ctx, id)), nil }}
	}
	nc := store.NewComparison{Name: spec.Name, SourceNote: spec.SourceNote, Reverify: spec.Reverify, DatasetID: spec.DatasetID,
		ProjectID: spec.ProjectID}
	if spec.DatasetID == 0 {
		if spec.Dataset.Open == nil {
			return 0, nil, errors.New("no dataset given")
		}
		id, err := save(spec.Dataset)
		if err != nil {
			cleanup()
			return 0, nil, err
		}
		nc.DatasetUploadID = id
	}
	mapped := Mapped{}
	for i, m := range spec.Models {
		id, err := save(m.File)
		if err != nil {
			cleanup()
			return 0, nil, err
		}
		run, err := describe(i, m, st.OpenUpload(ctx, id), spec.AcceptGuess, mapped)
		if err != nil {
			cleanup()
			return 0, nil, err
		}
		if err := sameLayout(m, run.Format); err != nil {
			cleanup()
			return 0, nil, err
		}
		files := []Upload{stored(m.File.Name, id)}
		for _, f := range m.More {
			more, err := save(f)
			if err != nil {
				cleanup()
				return 0, nil, err
			}
			run.MoreUploadIDs = append(run.MoreUploadIDs, more)
			files = append(files, stored(f.Name, more))
		}
		if err := IdenticalFiles(m.Name, files); err != nil {
			cleanup()
			return 0, nil, err
		}
		run.UploadID = id
		runs, err := SplitSteps(run, 1+len(m.More), func() (io.ReadCloser, error) { return io.NopCloser(st.OpenUpload(ctx, id)), nil }, len(nc.Runs))
		if err != nil {
			cleanup()
			return 0, nil, err
		}
		nc.Runs = append(nc.Runs, runs...)
	}
	if err := checkRuns(nc.Runs); err != nil {
		cleanup()
		return 0, nil, err
	}
	var cid int64
	err := st.WithTx(ctx, func(tx *store.Store) error {
		var err error
		if cid, err = tx.CreateComparison(ctx, nc); err != nil {
			return err
		}
		return jobs.StartImport(ctx, client, tx, cid)
	})
	if err != nil {
		cleanup()
		return 0, nil, err
	}
	return cid, mapped, nil
}

// describe examines model i's file (read from r) and returns its run:
// role, format and mapping. A file in an unrecognised layout without a
// mapping is refused (a *GuessError) unless acceptGuess; a guessed mapping
// it uses is added to mapped.
func describe(i int, m Model, r io.Reader, acceptGuess bool, mapped Mapped) (store.NewRun, error) {
	role := m.Role
	if role == "" {
		role = "rl"
		if i == 0 {
			role = "base"
		}
	}
	head := make([]byte, ingest.SniffBytes)
	n, rerr := io.ReadFull(r, head)
	if rerr != nil && rerr != io.EOF && rerr != io.ErrUnexpectedEOF {
		return store.NewRun{}, fmt.Errorf("model %q: read %s: %w", m.Name, m.File.Name, rerr)
	}
	head = head[:n]
	ex, err := ingest.Examine(io.MultiReader(bytes.NewReader(head), r), m.File.Name)
	format, mapping := ex.Format, ex.Mapping
	if m.Mapping != nil {
		format, mapping, err = ingest.FormatMapped, m.Mapping, nil
		// A path the file does not have is refused now, not read as "no verdicts".
		if err = ingest.CheckMapping(head, m.File.Name, m.Mapping); err != nil {
			err = fmt.Errorf("--map: %w", err)
		}
	}
	if err != nil {
		return store.NewRun{}, fmt.Errorf("model %q: %w", m.Name, err)
	}
	if format == ingest.FormatMapped && m.Mapping == nil && !acceptGuess {
		return store.NewRun{}, &GuessError{Model: m.Name, File: m.File.Name, Guess: *mapping}
	}
	if format == ingest.FormatMapped && m.Mapping == nil {
		// An accepted guess is checked as a given mapping is: one that reads nothing is refused now.
		if err := ingest.CheckMapping(head, m.File.Name, mapping); err != nil {
			return store.NewRun{}, fmt.Errorf("model %q: the guessed mapping: %w", m.Name, err)
		}
	}
	if !code.ValidHarness(m.CodeHarness) {
		return store.NewRun{}, fmt.Errorf("model %q: unknown code harness %q (use %s)", m.Name, m.CodeHarness, code.HarnessNames())
	}
	names := []string{m.File.Name}
	for _, f := range m.More {
		names = append(names, f.Name)
	}
	run := store.NewRun{ModelName: m.Name, Role: role, Step: m.Step, SourceFile: SourceFiles(names), Format: string(format),
		CodeHarness: m.CodeHarness}
	if format == ingest.FormatMapped && mapping != nil {
		run.Mapping = mapping
		if m.Mapping == nil {
			mapped[m.Name] = *mapping
		}
	}
	return run, nil
}

// sameLayout refuses a model's further files (m.More) when their layout is not its first file's,
// format: they are all read as the first one is. A mapped model's files are all mapped.
func sameLayout(m Model, format string) error {
	if m.Mapping != nil {
		return nil
	}
	for _, file := range m.More {
		r, err := file.Open()
		if err != nil {
			return fmt.Errorf("model %q: open %s: %w", m.Name, file.Name, err)
		}
		ex, err := ingest.Examine(r, file.Name)
		r.Close()
		if err != nil {
			return fmt.Errorf("model %q: %w (one of its %d files: give only the samples files)", m.Name, err, len(m.More)+1)
		}
		if string(ex.Format) != format {
			return fmt.Errorf("model %q: %s is %s, but %s is %s: one model's files must share one layout (give them as separate models, or map them with --map)",
				m.Name, file.Name, ingest.Describe(ex.Format), m.File.Name, ingest.Describe(ingest.Format(format)))
		}
	}
	return nil
}

// SourceFiles is a run's source line for a model's files: the file's name, or "3 files: a, b, c".
func SourceFiles(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return fmt.Sprintf("%d files: %s", len(names), strings.Join(names, ", "))
}

// CreateLocal creates the comparison from files on this machine without
// storing them: the dataset is loaded here and now, and each samples file
// is imported straight from its path by an ImportLocalArgs job in queue,
// which client must work (jobs.Config.LocalQueue, jobs.NewLocalQueue) until
// the import is done; WaitImported waits for that. Progress, errors (file,
// line, field) and the all-or-nothing rule are those of an uploaded file's
// import. Every model's File must have a Path. Layouts are examined and
// refused as by Create. On error before the comparison exists nothing is
// kept; a bad samples file fails the comparison with its reason.
func CreateLocal(ctx context.Context, st *store.Store, client *jobs.Client, spec Spec, queue string) (int64, Mapped, error) {
	if err := spec.check(); err != nil {
		return 0, nil, err
	}
	nc := store.NewComparison{Name: spec.Name, SourceNote: spec.SourceNote, Reverify: spec.Reverify, DatasetID: spec.DatasetID,
		ProjectID: spec.ProjectID}
	mapped := Mapped{}
	var paths [][]string
	for i, m := range spec.Models {
		var abs string
		var files []string
		for _, file := range append([]File{m.File}, m.More...) {
			if file.Path == "" {
				return 0, nil, fmt.Errorf("model %q: %s is not a local file", m.Name, file.Name)
			}
			a, err := filepath.Abs(file.Path)
			if err != nil {
				return 0, nil, fmt.Errorf("model %q: %w", m.Name, err)
			}
			files = append(files, a)
		}
		abs = files[0]
		f, err := os.Open(abs)
		if err != nil {
			return 0, nil, fmt.Errorf("model %q: %w", m.Name, err)
		}
		run, err := describe(i, m, f, spec.AcceptGuess, mapped)
		f.Close()
		if err != nil {
			return 0, nil, err
		}
		if err := sameLayout(m, run.Format); err != nil {
			return 0, nil, err
		}
		if len(files) > 1 {
			ups := make([]Upload, len(files))
			for j, path := range files {
				fi, err := os.Stat(path)
				if err != nil {
					return 0, nil, fmt.Errorf("model %q: %w", m.Name, err)
				}
				ups[j] = Upload{Name: filepath.Base(path), Size: fi.Size(), Open: func() (io.ReadCloser, error) { return os.Open(path) }}
			}
			if err := IdenticalFiles(m.Name, ups); err != nil {
				return 0, nil, err
			}
		}
		runs, err := SplitSteps(run, len(files), func() (io.ReadCloser, error) { return os.Open(abs) }, len(nc.Runs))
		if err != nil {
			return 0, nil, err
		}
		nc.Runs = append(nc.Runs, runs...)
		paths = append(paths, files)
		for range runs[1:] {
			paths = append(paths, nil) // split off the first: its import reads them
		}
	}
	if err := checkRuns(nc.Runs); err != nil {
		return 0, nil, err
	}
	var cid int64
	err := st.WithTx(ctx, func(tx *store.Store) error {
		if spec.DatasetID == 0 && spec.Dataset.Open == nil {
			return errors.New("no dataset given")
		}
		var err error
		if cid, err = tx.CreateComparison(ctx, nc); err != nil {
			return err
		}
		c, err := tx.GetComparison(ctx, cid)
		if err != nil {
			return err
		}
		if spec.DatasetID == 0 {
			// Read after the comparison exists: a dataset of the same
			// problems already in its project is reused.
			datasetID, reused, err := jobs.ImportDataset(ctx, tx, spec.Dataset.Name, spec.Dataset.Open, c.ProjectID)
			if err != nil {
				return err
			}
			if err := tx.SetComparisonDataset(ctx, cid, datasetID); err != nil {
				return err
			}
			if reused {
				if err := tx.MarkDatasetReused(ctx, cid); err != nil {
					return err
				}
			}
		}
		byRun := map[int64][]string{}
		for i, r := range c.Runs {
			if paths[i] != nil {
				byRun[r.ID] = paths[i]
			}
		}
		return jobs.StartLocalImport(ctx, client, tx, cid, queue, byRun)
	})
	if err != nil {
		return 0, nil, err
	}
	return cid, mapped, nil
}

// WaitImported waits until no run of the comparison is importing any more
// (its local files are read), or the comparison or one of its runs failed
// (the error names it). When
// ctx ends first, the import is given up: the comparison fails saying so
// and nothing of it is kept.
func WaitImported(ctx context.Context, st *store.Store, id int64) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := st.GetComparison(ctx, id)
		if err != nil && ctx.Err() == nil {
			return err
		}
		if err == nil {
			if c.Status == store.StatusFailed {
				return fmt.Errorf("comparison %d failed: %s", id, c.Error)
			}
			done := true
			for _, r := range c.Runs {
				if r.Status == store.StatusPending || r.Status == store.StatusImporting {
					done = false
				}
				if r.Status == store.StatusFailed {
					// GetComparison reads the comparison before its runs, so a
					// failure recorded between the two shows on the runs
					// first: read the comparison's message again.
					if now, err := st.GetComparison(ctx, id); err == nil && now.Status == store.StatusFailed {
						return fmt.Errorf("comparison %d failed: %s", id, now.Error)
					}
					return fmt.Errorf("comparison %d: model %q failed: %s", id, r.ModelName, r.Error)
				}
			}
			if done {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			jobs.FailLocalImport(ctx, st, id, errors.New("`reach import` was interrupted before its files were read; nothing of them was kept: run the import again"))
			return fmt.Errorf("interrupted: comparison %d failed, nothing of it was kept: %w", id, ctx.Err())
		case <-tick.C:
		}
	}
}

// ParseModelFlag splits a NAME=FILE command-line value. A name of one
// temperature of a sweep keeps its "@T=…": rl@T=1.0=rl.jsonl is the run
// rl@T=1.0 of file rl.jsonl.
func ParseModelFlag(v string) (name, path string, err error) {
	name, path, ok := strings.Cut(v, "=")
	if t, rest, swept := strings.Cut(path, "="); ok && swept && strings.HasSuffix(name, "@T") {
		if _, err := strconv.ParseFloat(t, 64); err == nil {
			name, path = name+"="+t, rest
		}
	}
	if !ok || name == "" || path == "" {
		return "", "", fmt.Errorf("%q: want NAME=FILE", v)
	}
	return name, path, nil
}

// EndpointModel is one model served by an OpenAI-compatible endpoint.
type EndpointModel struct {
	Name           string
	Role           string // base | rl | checkpoint | distilled ("" = base for the first, rl after)
	Step           *int
	BaseURL        string // e.g. http://gpu1:8000/v1
	Model          string // the server's model name
	APIKey         string // sealed with box before it is stored
	Style          string // completions | chat
	MaxConcurrency int
	// Template overrides the comparison's prompt template for this model
	// ("" = the comparison's).
	Template string
	// Temperature overrides the comparison's temperature (nil = the
	// comparison's); SweepModels sets it.
	Temperature *float64
}

// SweepName is a swept run's name: "rl@T=1.0" (whole temperatures with one
// decimal, others as short as they are exact).
func SweepName(name string, t float64) string {
	s := strconv.FormatFloat(t, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return name + "@T=" + s
}

// MaxTemperature is the largest sampling temperature a sweep accepts
// (servers take more, but past a few the samples are noise).
const MaxTemperature = 10

// SweepModels turns every model into one per temperature (temperatures in
// the order given, every model at the first before any at the second),
// named by SweepName, with the temperature as their override. Errors: a
// temperature below 0, above MaxTemperature or not a number, or one given
// twice.
func SweepModels(models []EndpointModel, temps []float64) ([]EndpointModel, error) {
	seen := map[float64]bool{}
	for _, t := range temps {
		if !(t >= 0) || t > MaxTemperature {
			return nil, fmt.Errorf("temperature %v: want a number from 0 to %g", t, float64(MaxTemperature))
		}
		if seen[t] {
			return nil, fmt.Errorf("temperature %v is given twice", t)
		}
		seen[t] = true
	}
	// Temperature by temperature, the models in their order within each:
	// the first two runs are the base and the RL model at the first
	// temperature, so the headline pair (the base model against the second
	// run) and token scoring compare base with RL, not the base model with
	// itself at another temperature.
	roles := make([]string, len(models))
	for i, m := range models {
		roles[i] = m.Role
		if roles[i] == "" {
			roles[i] = "rl"
			if i == 0 {
				roles[i] = "base"
			}
		}
	}
	var out []EndpointModel
	for _, t := range temps {
		for i, m := range models {
			x := m
			x.Name, x.Role, x.Temperature = SweepName(m.Name, t), roles[i], &t
			out = append(out, x)
		}
	}
	return out, nil
}

// temperaturesText is the sampling temperature for the comparison's note:
// "0.6" or, for a sweep, "0.6, 1, 1.2 (one run per model and temperature)".
func temperaturesText(spec SampleSpec) string {
	if len(spec.Temperatures) < 2 {
		return fmt.Sprintf("%g", spec.Config.Temperature)
	}
	parts := make([]string, len(spec.Temperatures))
	for i, t := range spec.Temperatures {
		parts[i] = fmt.Sprintf("%g", t)
	}
	return strings.Join(parts, ", ") + " (one run per model and temperature)"
}

// SampleSpec describes an endpoint-backed comparison.
type SampleSpec struct {
	Name      string
	Dataset   File
	DatasetID int64
	Models    []EndpointModel
	Config    jobs.SamplingConfig
	// Temperatures, when there are two or more, sample every model once
	// per temperature: one run each, named "NAME@T=1.0", whose override
	// holds the temperature (a temperature sweep, internal/tempsweep).
	Temperatures []float64
	// AutoStart starts sampling as soon as the dataset is loaded; otherwise
	// the comparison waits, configured, for "Start sampling".
	AutoStart bool
	ProjectID int64 // 0: the default project
}

// CreateSampling stores an endpoint-backed comparison (API keys sealed with
// box) and enqueues the load of its dataset.
func CreateSampling(ctx context.Context, st *store.Store, client *jobs.Client, box *secret.Box, spec SampleSpec) (int64, error) {
	if spec.Name == "" {
		return 0, errors.New("the comparison needs a name")
	}
	if len(spec.Temperatures) >= 2 {
		models, err := SweepModels(spec.Models, spec.Temperatures)
		if err != nil {
			return 0, err
		}
		spec.Models, spec.Config.Temperature = models, spec.Temperatures[0]
	}
	if err := checkModelCount(len(spec.Models)); err != nil {
		return 0, err
	}
	if err := spec.Config.Validate(); err != nil {
		return 0, fmt.Errorf("sampling config: %w", err)
	}
	nc := store.NewComparison{Name: spec.Name, DatasetID: spec.DatasetID, Sampling: spec.Config, AutoStart: spec.AutoStart,
		ProjectID: spec.ProjectID,
		SourceNote: fmt.Sprintf("Sampled by Reach: n = %d, temperature %s, top-p %g, max %d tokens, prompt %s.",
			spec.Config.N, temperaturesText(spec), spec.Config.TopP, spec.Config.MaxTokens, spec.Config.Template)}
	seen := map[string]bool{}
	for i, m := range spec.Models {
		if m.Name == "" || seen[m.Name] {
			return 0, fmt.Errorf("model %d: empty or repeated name %q", i+1, m.Name)
		}
		seen[m.Name] = true
		if _, err := sampling.New(sampling.Endpoint{BaseURL: m.BaseURL, Model: m.Model, Style: sampling.Style(m.Style)}, nil); err != nil {
			return 0, fmt.Errorf("model %q: %w", m.Name, err)
		}
		role := m.Role
		if role == "" {
			role = "rl"
			if i == 0 {
				role = "base"
			}
		}
		var sealed []byte
		if m.APIKey != "" {
			if box == nil {
				return 0, errors.New("no server secret to store the API key with")
			}
			var err error
			if sealed, err = box.SealFor(m.APIKey, m.BaseURL); err != nil {
				return 0, err
			}
		}
		run := store.NewRun{ModelName: m.Name, Role: role, Step: m.Step, Format: "endpoint",
			Endpoint: store.Endpoint{BaseURL: m.BaseURL, Model: m.Model, Style: m.Style, APIKeyEnc: sealed, MaxConcurrency: m.MaxConcurrency}}
		if m.Template != "" || m.Temperature != nil {
			o := jobs.ModelOverride{Template: m.Template, Temperature: m.Temperature}
			if m.Template != "" {
				check := spec.Config
				check.Template, check.TemplateText = o.Template, ""
				if _, err := check.TemplateFor(); err != nil {
					return 0, fmt.Errorf("model %q: %w", m.Name, err)
				}
			}
			run.SamplingOverride = o
		}
		nc.Runs = append(nc.Runs, run)
	}
	var upload int64
	if spec.DatasetID == 0 {
		if spec.Dataset.Open == nil {
			return 0, errors.New("no dataset given")
		}
		r, err := spec.Dataset.Open()
		if err != nil {
			return 0, fmt.Errorf("open %s: %w", spec.Dataset.Name, err)
		}
		upload, _, err = st.SaveUpload(ctx, spec.Dataset.Name, r, 0)
		r.Close()
		if err != nil {
			return 0, err
		}
		nc.DatasetUploadID = upload
	}
	var id int64
	err := st.WithTx(ctx, func(tx *store.Store) error {
		var err error
		if id, err = tx.CreateComparison(ctx, nc); err != nil {
			return err
		}
		return jobs.StartImport(ctx, client, tx, id)
	})
	if err != nil && upload != 0 {
		_ = st.DeleteUpload(context.WithoutCancel(ctx), upload)
	}
	return id, err
}

// ParseEndpointFlag splits a NAME=URL#MODEL command-line value.
func ParseEndpointFlag(v string) (name, baseURL, model string, err error) {
	name, rest, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return "", "", "", fmt.Errorf("%q: want NAME=URL#MODEL", v)
	}
	baseURL, model, ok = strings.Cut(rest, "#")
	if !ok || baseURL == "" || model == "" {
		return "", "", "", fmt.Errorf("%q: want NAME=URL#MODEL (the model name after #)", v)
	}
	return name, baseURL, model, nil
}

// mappingKeys are ParseMapping's keys, each with the Mapping field it sets.
func mappingKeys(m *ingest.Mapping) []struct {
	key string
	dst *string
} {
	return []struct {
		key string
		dst *string
	}{{"problem_id", &m.ProblemID}, {"id_kind", &m.IDKind}, {"list", &m.List}, {"completion", &m.Completion},
		{"correct", &m.Correct}, {"extracted", &m.Extracted}, {"sample_index", &m.SampleIndex},
		{"finish_reason", &m.FinishReason}, {"tokens", &m.Tokens}, {"question", &m.Question}, {"prompt", &m.Prompt},
		{"reference", &m.Reference}}
}

// ParseMapping reads a --map value: comma-separated KEY=PATH pairs with keys
// problem_id, id_kind (id, index0 or index1), list, completion, correct,
// threshold (a number: correct is a score, correct when >= it), extracted,
// sample_index, finish_reason, tokens, question, prompt and reference. Paths
// use gjson syntax at any depth ("response.body.choices", "a.0.b"; JSONPath
// "$.a[0].b" works too); inside a list item a path is relative to the item.
// E.g. "completion=175b_verification.solution,correct=175b_verification.is_correct".
// A path holding a comma or an equals sign is written with a backslash before it.
func ParseMapping(v string) (*ingest.Mapping, error) {
	m := &ingest.Mapping{}
	keys := mappingKeys(m)
	var names []string
	for _, k := range keys {
		names = append(names, k.key)
	}
	want := fmt.Sprintf("want KEY=PATH pairs with keys %s, threshold", strings.Join(names, ", "))
	for _, pair := range splitUnescaped(v, ',') {
		k, f, ok := strings.Cut(strings.TrimSpace(pair), "=")
		f = strings.NewReplacer(`\,`, ",", `\=`, "=").Replace(f)
		if !ok || f == "" {
			return nil, fmt.Errorf("mapping %q: %s", pair, want)
		}
		if k == "threshold" {
			t, err := strconv.ParseFloat(f, 64)
			if err != nil || t <= 0 {
				return nil, fmt.Errorf("mapping %q: want a positive number", pair)
			}
			m.Threshold = t
			continue
		}
		found := false
		for _, key := range keys {
			if key.key == k {
				*key.dst, found = f, true
			}
		}
		if !found {
			return nil, fmt.Errorf("mapping %q: %s", pair, want)
		}
	}
	if m.Completion == "" && m.Correct == "" && m.List == "" {
		return nil, errors.New("mapping: give at least completion=, correct= or list=")
	}
	return m, nil
}

// FormatMapping writes a mapping as ParseMapping reads it.
func FormatMapping(m ingest.Mapping) string {
	var parts []string
	esc := strings.NewReplacer(",", `\,`, "=", `\=`)
	for _, k := range mappingKeys(&m) {
		if *k.dst != "" {
			parts = append(parts, k.key+"="+esc.Replace(*k.dst))
		}
	}
	if m.Threshold > 0 {
		parts = append(parts, "threshold="+strconv.FormatFloat(m.Threshold, 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

// splitUnescaped splits s at each sep not preceded by a backslash.
func splitUnescaped(s string, sep byte) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		if s[i] == sep {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// ParseTemperatures reads a temperature sweep as people write it: "0.6, 1.0, 1.2" (commas or
// spaces between). "" is no sweep (nil). Errors: a value that is not a number ≥ 0, one given
// twice, or a single temperature (that is the temperature field's job).
func ParseTemperatures(s string) ([]float64, error) {
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == ';' })
	if len(fields) == 0 {
		return nil, nil
	}
	var out []float64
	for _, f := range fields {
		t, err := strconv.ParseFloat(f, 64)
		if err != nil || !(t >= 0) || math.IsInf(t, 0) {
			return nil, fmt.Errorf("temperatures: %q is not a number ≥ 0", f)
		}
		if slices.Contains(out, t) {
			return nil, fmt.Errorf("temperatures: %v is given twice", t)
		}
		out = append(out, t)
	}
	if len(out) < 2 {
		return nil, fmt.Errorf("temperatures: a sweep needs two or more (got %q); for one, set the temperature", s)
	}
	return out, nil
}
