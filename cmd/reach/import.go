package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/follow"
	"github.com/reach-lab/reach/internal/hidden"
	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/training"
	"github.com/reach-lab/reach/internal/verify/code"
)

// modelFlags collects --base/--model NAME=FILE in order; --step N applies to
// the model named just before it.
type modelFlags struct {
	models []intake.Model
	err    error
	series int // checkpoints the last --model's folder gave (0: one model)
	// lastBase and lastN are the models the last --base or --model gave
	// (the base first in models, the others the last lastN), which its
	// --map applies to.
	lastBase bool
	lastN    int
	// run is the last --model given as a folder or pattern, the one
	// --follow watches.
	run *followed
}

// followed is a training run's folder given as one --model.
type followed struct {
	name, arg, root string
	first           int             // index in models of its first model
	mapping         *ingest.Mapping // its --map, for the steps to come too
}

// modelRoot is the folder a model's argument names: the directory itself,
// or a pattern's part before its first wildcard, so that only names below
// it can give training steps.
func modelRoot(arg string) string {
	if i := strings.IndexAny(arg, "*?["); i >= 0 {
		if _, err := os.Stat(arg); err != nil {
			return filepath.Dir(arg[:i] + "x")
		}
	}
	if fi, err := os.Stat(arg); err == nil && !fi.IsDir() {
		return filepath.Dir(arg)
	}
	return arg
}

func (m *modelFlags) add(role string) func(string) error {
	return func(v string) error {
		name, path, err := intake.ParseModelFlag(v)
		if err != nil {
			return err
		}
		// A directory or a pattern gives the model's files (one per seed, repeat, ...), pooled.
		files, err := ingest.ModelFiles(path)
		if err != nil {
			return fmt.Errorf("model %q: %w", name, err)
		}
		if role == "base" && len(m.models) > 0 && m.models[0].Role == "base" {
			return errors.New("only one --base")
		}
		// A training run's folder (one file or folder per step, as trainers
		// write them): each step is a checkpoint of the model.
		cks, err := training.Split(modelRoot(path), files)
		if err != nil {
			return fmt.Errorf("model %q: %w", name, err)
		}
		if cks != nil {
			if role == "base" {
				return fmt.Errorf("base model %q: its files name %d training steps (%d to %d); the base model is one model: give the checkpoints with --model", name, len(cks), cks[0].Step, cks[len(cks)-1].Step)
			}
			for _, ck := range cks {
				step := ck.Step
				mod := intake.Model{Name: fmt.Sprintf("%s step %d", name, step), Role: "checkpoint", Step: &step, File: intake.LocalFile(ck.Files[0])}
				for _, f := range ck.Files[1:] {
					mod.More = append(mod.More, intake.LocalFile(f))
				}
				m.models = append(m.models, mod)
			}
			m.series, m.lastBase, m.lastN = len(cks), false, len(cks)
			if fi, err := os.Stat(path); err != nil || fi.IsDir() {
				m.run = &followed{name: name, arg: path, root: modelRoot(path), first: len(m.models) - len(cks)}
			}
			return nil
		}
		m.series = 0
		if fi, err := os.Stat(path); role != "base" && (err != nil || fi.IsDir()) {
			m.run = &followed{name: name, arg: path, root: modelRoot(path), first: len(m.models)}
		}
		mod := intake.Model{Name: name, Role: role, File: intake.LocalFile(files[0])}
		for _, f := range files[1:] {
			mod.More = append(mod.More, intake.LocalFile(f))
		}
		if role == "base" {
			m.models = append([]intake.Model{mod}, m.models...)
			if m.run != nil {
				m.run.first++
			}
		} else {
			m.models = append(m.models, mod)
		}
		m.lastBase, m.lastN = role == "base", 1
		return nil
	}
}

func (m *modelFlags) mapping(v string) error {
	if len(m.models) == 0 {
		return errors.New("--map goes after the --base or --model it belongs to")
	}
	mp, err := intake.ParseMapping(v)
	if err != nil {
		return err
	}
	if m.lastBase {
		m.models[0].Mapping = mp
		return nil
	}
	// Every checkpoint of a training run's folder, and the steps --follow
	// adds later.
	for i := len(m.models) - m.lastN; i < len(m.models); i++ {
		m.models[i].Mapping = mp
	}
	if m.run != nil && m.run.first >= len(m.models)-m.lastN {
		m.run.mapping = mp
	}
	return nil
}

func (m *modelFlags) step(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return fmt.Errorf("--step %q: want a non-negative whole number", v)
	}
	if len(m.models) == 0 || m.models[len(m.models)-1].Role == "base" {
		return errors.New("--step goes after the --model it belongs to")
	}
	if m.series > 0 {
		return fmt.Errorf("--step %s: the --model before it is a training run whose %d checkpoints take their steps from the file names", v, m.series)
	}
	last := &m.models[len(m.models)-1]
	last.Step, last.Role = &n, "checkpoint"
	return nil
}

func runImport(ctx context.Context, args []string, stdout io.Writer) error {
	fs, dbURL := newFlags("import", os.Stderr)
	var mf modelFlags
	dataset := fs.String("dataset", "", "dataset JSONL file (problems with reference answers)")
	name := fs.String("name", "", "comparison name")
	note := fs.String("source", "", "where the samples come from (shown on the page)")
	wait := fs.Bool("wait", false, "work the jobs in this process and wait until the comparison is ready")
	reverify := fs.Bool("reverify", false, "ignore the files' verdicts and verify every sample with Reach's verifier")
	project := fs.String("project", "", "project to put the comparison in; created if missing, owned by the first admin (default: the default project)")
	harness := fs.String("code-harness", "", "code problems: how completions become programs ("+code.HarnessNames()+
		"; default: chosen per file, the harness under which a few of its completions are valid Python and agree with its labels)")
	fs.Func("base", "base model samples, NAME=FILE; FILE may be a directory or a quoted pattern ('runs/*.jsonl') of several files, pooled per problem", mf.add("base"))
	fs.Func("model", "other model samples, NAME=FILE (repeatable; FILE as for --base). A folder of a training run, one file or folder per step "+
		"(verl {step}.jsonl, TRL completions_{step}.parquet, step-N/, global_step_N/, checkpoint-N/), or one file whose records carry a step field "+
		"(a verl dump or TRL completions table of several steps), gives one checkpoint per step", mf.add("rl"))
	fs.Func("step", "training step of the --model just before (marks it a checkpoint)", mf.step)
	fs.Func("map", "field mapping of the model just before, e.g. completion=text,correct=ok,problem_id=qid,list=rollouts; paths at any depth (response.body.choices, a.0.b); keys problem_id id_kind list completion correct threshold extracted sample_index finish_reason tokens question prompt reference", mf.mapping)
	acceptGuess := fs.Bool("accept-guess", false, "read files in an unrecognised layout with the guessed field mapping (printed) instead of refusing them")
	follow := fs.Bool("follow", false, "with --wait and a --model folder of a training run: stay running and add each step the trainer writes later as a new checkpoint (Ctrl-C stops and keeps everything)")
	followEvery := fs.Duration("follow-every", 5*time.Second, "with --follow: how often to look for new step files; a file is read once unchanged for this long")
	upload := fs.Bool("upload", false, "store the files in Postgres first and leave their import to any 'reach serve' or 'reach worker' (as a browser upload does; "+
		"the stored copy is deleted once imported). Without it this process reads the samples files from its disk and stores only the samples, "+
		"so it stays until they are read")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	roles := make([]string, len(mf.models))
	for i, m := range mf.models {
		roles[i] = m.Role
	}
	if err := missingFlags("reach import", "FILE", *dataset, *name, roles); err != nil {
		return err
	}
	if _, err := os.Stat(*dataset); err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	if *follow {
		if !*wait {
			return errors.New("--follow needs --wait: this process works the jobs while it follows")
		}
		if mf.run == nil {
			return errors.New("--follow needs a --model given as a folder (or a quoted pattern) of a training run's step files")
		}
		if err := mf.run.asCheckpoint(mf.models); err != nil {
			return err
		}
	}
	if !code.ValidHarness(*harness) {
		return fmt.Errorf("--code-harness %q: use %s", *harness, code.HarnessNames())
	}
	for i := range mf.models {
		mf.models[i].CodeHarness = *harness
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// The import holds a few batches per file; what grows past them is
		// garbage (parsed lines, the verifier's work), which the collector
		// lets reach twice the live heap: a soft limit makes it collect
		// sooner instead (measured peak RSS without it: 489 MB re-verifying
		// 2 × 1.4 GB files).
		debug.SetMemoryLimit(importMemoryLimit)
	}
	st, err := openStore(ctx, *dbURL, false)
	if err != nil {
		return err
	}
	defer st.Close()
	queue := ""
	if !*upload {
		queue = jobs.NewLocalQueue()
	}
	client, stop, err := cliJobs(ctx, st, nil, *wait, queue)
	if err != nil {
		return err
	}
	defer stop()
	var projectID int64
	if *project != "" {
		if projectID, err = ensureProject(ctx, st, *project); err != nil {
			return err
		}
	}
	spec := intake.Spec{Name: *name, SourceNote: *note,
		Dataset: intake.LocalFile(*dataset), Models: mf.models, Reverify: *reverify, ProjectID: projectID, AcceptGuess: *acceptGuess}
	var (
		id     int64
		mapped intake.Mapped
	)
	if *upload {
		id, mapped, err = intake.Create(ctx, st, client, spec)
	} else {
		id, mapped, err = intake.CreateLocal(ctx, st, client, spec, queue)
	}
	if err != nil {
		return err
	}
	for model, m := range mapped {
		fmt.Fprintf(os.Stderr, "model %q: unrecognised layout, read with the guessed field mapping --map '%s'\n", model, intake.FormatMapping(m))
	}
	if !*upload {
		// The files are on this machine: stay until they are read.
		if err := intake.WaitImported(ctx, st, id); err != nil {
			return err
		}
	}
	if *wait {
		if err := waitReady(ctx, st, id); err != nil {
			return err
		}
		// Everything `reach report` shows, intervals included, is ready
		// when --wait returns.
		if err := jobs.ComputeStats(ctx, st, id, 0); err != nil {
			return fmt.Errorf("statistics of comparison %d: %w", id, err)
		}
		// The page's other views (guessable problems left out, ...) are
		// computed by a worker, so that no page request has to.
		if err := jobs.StartStats(ctx, client, id); err != nil {
			return err
		}
	}
	fmt.Fprintln(stdout, id)
	if *follow {
		fmt.Fprintf(os.Stderr, "following %s (every %v; Ctrl-C stops and keeps what is in)\n", mf.run.arg, *followEvery)
		return followRun(ctx, st, client, id, mf.run, *followEvery, *harness, *acceptGuess, stdout)
	}
	return nil
}

// asCheckpoint makes the followed model a checkpoint when its folder holds
// one step so far (Split calls one step one model).
func (f *followed) asCheckpoint(models []intake.Model) error {
	m := &models[f.first]
	if m.Step != nil || m.Role == "base" {
		return nil
	}
	files, err := ingest.ModelFiles(f.arg)
	if err != nil {
		return err
	}
	step, ok := -1, true
	for _, file := range files {
		rel, err := filepath.Rel(f.root, file)
		if err != nil {
			rel = filepath.Base(file)
		}
		s, named := training.StepOf(rel)
		if !named || (step >= 0 && s != step) {
			ok = false
			break
		}
		step = s
	}
	if !ok || step < 0 {
		return fmt.Errorf("--follow: the files of --model %s name no training step (%s): name them as the trainer does ({step}.jsonl, step-N/, ...)", f.name, filepath.Base(files[0]))
	}
	m.Name, m.Role, m.Step = fmt.Sprintf("%s step %d", f.name, step), "checkpoint", &step
	return nil
}

// followRun watches a training run's folder and adds each new step as a
// checkpoint of comparison id once its files have not changed for every
// (so a file still being written is not read half), until ctx ends or the
// follow is stopped from the page. It looks as a comparison following a
// server folder does (follow.State.Look), recorded as the comparison's
// follow, so that the page shows it and keeps each step that failed until
// it goes in; a failed step is tried again once its file changes.
func followRun(ctx context.Context, st *store.Store, client *jobs.Client, id int64, f *followed, every time.Duration,
	harness string, acceptGuess bool, stdout io.Writer) error {
	path := f.arg
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	fid, err := st.CreateFollow(ctx, id, f.name, path, every, 0)
	if err != nil {
		return err
	}
	defer func() {
		_, _ = st.StopFollow(context.WithoutCancel(ctx), id, "")
	}()
	run := follow.Run{ComparisonID: id, Model: f.name, Arg: f.arg, Root: f.root, Every: every, CodeHarness: harness, AcceptGuess: acceptGuess, Mapping: f.mapping}
	var state follow.State
	tick := time.NewTicker(every)
	defer tick.Stop()
	stopped := func() {
		fmt.Fprintf(os.Stderr, "stopped following %s; comparison %d keeps every checkpoint that went in\n", f.arg, id)
	}
	for {
		select {
		case <-ctx.Done():
			stopped()
			return nil
		case <-tick.C:
		}
		if fl, err := st.GetFollow(ctx, fid); err == nil && fl.StoppedAt != nil {
			fmt.Fprintln(os.Stderr, "the follow was stopped on the comparison's page")
			stopped()
			return nil
		}
		for {
			out, err := state.Look(ctx, st, client, run, time.Now())
			if ctx.Err() != nil {
				break // stopped: whatever committed stays
			}
			if err != nil {
				return err
			}
			for _, step := range out.In {
				if err := jobs.ComputeStats(ctx, st, id, 0); err != nil && ctx.Err() == nil {
					return fmt.Errorf("statistics of comparison %d: %w", id, err)
				}
				fmt.Fprintf(stdout, "step %d added to comparison %d\n", step, id)
			}
			for _, fs := range out.Failed {
				fmt.Fprintf(os.Stderr, "%s\n", follow.FailureText(fs))
			}
			b, err := json.Marshal(state)
			if err != nil {
				return err
			}
			if err := st.SaveFollowScan(ctx, fid, b, time.Now(), state.Summary(out.ScanErr)); err != nil && ctx.Err() == nil {
				return err
			}
			if !out.Busy() {
				break
			}
			if out.Adding >= 0 {
				// Its import ends in ready, the step in or failed and taken
				// out (the next look says which), or the whole comparison
				// failed.
				if err := waitReady(ctx, st, id); err != nil {
					if ctx.Err() != nil {
						break
					}
					return err
				}
			}
		}
	}
}

// importMemoryLimit is reach import's soft memory limit (GOMEMLIMIT
// overrides it): a target for the collector, not a cap.
const importMemoryLimit = 320 << 20

// ensureProject returns the project called name, creating it with the
// instance's first admin as owner (no owner yet when there is no admin).
func ensureProject(ctx context.Context, st *store.Store, name string) (int64, error) {
	var owner int64
	admin, err := st.FirstAdmin(ctx)
	switch {
	case err == nil:
		owner = admin.ID
	case !errors.Is(err, store.ErrNotFound):
		return 0, err
	}
	return st.EnsureProject(ctx, name, owner)
}

// waitReady polls until the comparison is ready (nil) or failed (its error).
func waitReady(ctx context.Context, st *store.Store, id int64) error {
	tick := time.NewTicker(300 * time.Millisecond)
	defer tick.Stop()
	for {
		c, err := st.GetComparison(ctx, id)
		if err != nil {
			return err
		}
		switch c.Status {
		case store.StatusReady:
			return nil
		case store.StatusFailed:
			return fmt.Errorf("comparison %d failed: %s", id, c.Error)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func runReport(ctx context.Context, args []string, stdout io.Writer) error {
	fs, dbURL := newFlags("report", os.Stderr)
	asJSON := fs.Bool("json", false, "print the report as JSON (the same as GET /api/v1/comparisons/{id}/report)")
	excludeGuessable := fs.Bool("exclude-guessable", false, "leave out problems whose reference answer is guessable (the page's Exclude guessable; ?exclude=guessable)")
	biased := fs.Bool("biased", false, "add the biased estimator 1 − (1 − c/n)^k's curves (?estimator=biased)")
	minN := fs.Int("min-n", 0, "leave out problems on which some model has fewer than this many samples (2 to 10000000; ?min_n=)")
	var pos []string
	var flags []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			flags = append(flags, a)
		} else if len(flags) > 0 && slices.Contains([]string{"--database-url", "-database-url", "--min-n", "-min-n"}, flags[len(flags)-1]) {
			flags = append(flags, a)
		} else {
			pos = append(pos, a)
		}
	}
	if err := parseFlags(fs, flags); err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New("usage: reach report ID [--json] [--exclude-guessable] [--biased] [--min-n N]")
	}
	if *minN != 0 && (*minN < 2 || *minN > 10_000_000) {
		return fmt.Errorf("--min-n %d: want 2 to 10000000 (0 keeps every problem)", *minN)
	}
	opt := analysis.Options{ExcludeGuessable: *excludeGuessable, Biased: *biased, MinN: *minN}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil {
		return fmt.Errorf("comparison id %q is not a number", pos[0])
	}
	st, err := openDatabase(ctx, *dbURL)
	if err != nil {
		return err
	}
	defer st.Close()
	c, err := st.GetComparison(ctx, id)
	if err != nil {
		return err
	}
	if c.Status != store.StatusReady {
		return reportNotReady(stdout, c, *asJSON)
	}
	rep, err := analysis.BuildWith(ctx, st, id, opt)
	if err != nil {
		return err
	}
	if rep.Stats.Status == analysis.StatsPending {
		// No worker has computed the intervals for these counts yet (none
		// may be running): compute them here rather than print "computing".
		if err := jobs.ComputeStats(ctx, st, id, 0); err != nil {
			return fmt.Errorf("statistics of comparison %d: %w", id, err)
		}
		if rep, err = analysis.BuildWith(ctx, st, id, opt); err != nil {
			return err
		}
	}
	if *asJSON {
		return rep.WriteJSON(stdout)
	}
	// Names and ids come from uploaded files: a terminal must not run
	// their control characters or reorder text by their bidi marks.
	stdout = terminalWriter{stdout}
	dropped := ""
	if rep.Dropped > 0 {
		dropped = fmt.Sprintf(" (%d dataset %s left out: not sampled by every model)", rep.Dropped, map[bool]string{true: "problem", false: "problems"}[rep.Dropped == 1])
	}
	if rep.MinN > 0 {
		dropped += fmt.Sprintf(" (%d with fewer than %d samples from some model left out: --min-n; k max was %d with them)", rep.ShortLeftOut, rep.MinN, rep.KMaxAll)
	}
	fmt.Fprintf(stdout, "%s — %s, %d problems%s, k up to %d\n", rep.Name, rep.Dataset, rep.Problems, dropped, rep.KMax)
	if d := rep.Design; d != nil && d.Uniform > 0 {
		fmt.Fprintf(stdout, "  adaptive sampling: %d samples drawn of a %d budget, %.0f%% of a uniform design's %d at n = %d; every problem sampled to k = %d, extrapolated past it (ext.)\n",
			d.Drawn, d.Budget, 100*float64(d.Drawn)/float64(d.Uniform), d.Uniform, d.Target, rep.KSampled)
	}
	for _, w := range rep.Warnings {
		// The same warnings the page shows at its top, before any figure.
		fmt.Fprintf(stdout, "  %s: %s\n", strings.ToUpper(w.Severity), w.Text)
	}
	for _, m := range rep.Models {
		if rep.KMax > 1 {
			ext := ""
			if m.PassAtK[rep.KMax-1].Extrapolated {
				ext = " ext."
			}
			fmt.Fprintf(stdout, "  %-30s pass@1 %6.2f%%  pass@%d %6.2f%%%s  solved %d\n", m.Name, 100*m.Pass1, rep.KMax,
				100*m.PassAtK[rep.KMax-1].Value, ext, m.Solved)
		} else {
			fmt.Fprintf(stdout, "  %-30s pass@1 %6.2f%%  solved %d\n", m.Name, 100*m.Pass1, m.Solved)
		}
	}
	for _, m := range rep.Models {
		if m.CodeHarnessWhy != "" {
			// Which harness graded the code, and why Reach chose it.
			fmt.Fprintf(stdout, "  code harness of %s: %s, %s\n", m.Name, m.CodeHarness, m.CodeHarnessWhy)
		}
	}
	for _, p := range rep.Pairs {
		fmt.Fprintf(stdout, "  %s vs %s: %s; ΔSE %+.2f pts; both %d, base-only %d, other-only %d, neither %d\n",
			p.Base, p.Other, p.Crossover.Label, 100*p.DeltaSE, p.Solved.Both, p.Solved.BaseOnly, p.Solved.OtherOnly, p.Solved.Neither)
	}
	if opt.Biased {
		printBiased(stdout, rep)
	}
	return nil
}

// printBiased prints the figures of --biased: the biased estimator
// 1 − (1 − c/n)^k at k max and the crossover it gives, below the unbiased
// ones (which stay the report's).
func printBiased(stdout io.Writer, rep *analysis.Report) {
	fmt.Fprintf(stdout, "  biased estimator 1 − (1 − c/n)^k (underestimates pass@k; the figures above stay unbiased):\n")
	for _, m := range rep.Models {
		if n := len(m.PassAtKBiased); n > 0 {
			fmt.Fprintf(stdout, "    %-28s pass@%d %6.2f%%\n", m.Name, n, 100*m.PassAtKBiased[n-1].Value)
		}
	}
	for _, p := range rep.Pairs {
		if p.CrossoverBiased != nil {
			fmt.Fprintf(stdout, "    %s vs %s: %s\n", p.Base, p.Other, p.CrossoverBiased.Label)
		}
	}
}

// reportNotReady says what an unfinished comparison is doing and how to
// finish it; with asJSON it prints that as a JSON status.
// terminalWriter writes text with control and hidden characters shown as
// markers (hidden.Terminal). Each Write must hold whole lines (Fprintf's).
type terminalWriter struct{ w io.Writer }

func (t terminalWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(t.w, hidden.Terminal(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

func reportNotReady(stdout io.Writer, c store.Comparison, asJSON bool) error {
	hint := "its jobs run in `reach serve` or `reach worker`: if none is running against this database, start one, or import with --wait"
	switch c.Status {
	case store.StatusFailed:
		hint = "fix the file and import it again"
	case store.StatusNeedsMapping:
		hint = fmt.Sprintf("confirm the field mapping of its samples file at /comparisons/%d/mapping", c.ID)
	case store.StatusConfigured, store.StatusPaused:
		hint = fmt.Sprintf("start or resume sampling at /comparisons/%d", c.ID)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"id": c.ID, "name": c.Name, "status": c.Status, "error": c.Error, "hint": hint}); err != nil {
			return err
		}
		return errNotReady
	}
	state := "is " + c.Status
	if c.Status == store.StatusFailed {
		state = "failed"
	}
	msg := fmt.Sprintf("comparison %d (%s) %s", c.ID, c.Name, state)
	if c.Error != "" {
		msg += ": " + strings.TrimRight(c.Error, ". ")
	}
	// "no report yet: comparison 8 (x) failed: broken.jsonl:43: truncated JSON. Fix the file and import it again."
	return fmt.Errorf("%w: %s. %s.", errNotReady, msg, strings.ToUpper(hint[:1])+hint[1:])
}

// errNotReady makes `reach report` exit non-zero on an unfinished comparison.
var errNotReady = errors.New("no report yet")

// missingFlags names the required flags of `reach import` / `reach sample`
// that were not given (dataset, name, a base model first in roles, one
// other model at least); nil when all are there. what is the command, kind
// the value a model flag takes (FILE or URL#MODEL).
func missingFlags(command, kind, dataset, name string, roles []string) error {
	var missing []string
	if dataset == "" {
		missing = append(missing, "--dataset FILE")
	}
	if name == "" {
		missing = append(missing, "--name NAME")
	}
	others := len(roles)
	if others > 0 && roles[0] == "base" {
		others--
	} else {
		missing = append(missing, "--base NAME="+kind)
	}
	if others == 0 {
		missing = append(missing, "--model NAME="+kind)
	}
	if len(missing) == 0 {
		return nil
	}
	// Name what is missing: a full flag list would bury it.
	return fmt.Errorf("missing %s (%s -h lists every flag)", strings.Join(missing, ", "), command)
}
