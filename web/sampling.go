package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/sampling"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/web/views"
)

func (s *Server) newSampling(w http.ResponseWriter, r *http.Request) {
	s.renderSampleForm(w, r, http.StatusOK, "")
}

func (s *Server) renderSampleForm(w http.ResponseWriter, r *http.Request, status int, msg string) {
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
	def := jobs.DefaultSamplingConfig()
	s.render(w, r, status, views.NewSampling(views.SampleForm{Datasets: ds, Templates: sampling.PresetNames(), Error: msg,
		N: def.N, Temperature: def.Temperature, TopP: def.TopP, MaxTokens: def.MaxTokens, Projects: ps}))
}

// parseSampling reads the "sample from endpoints" form. The dataset file,
// if any, is spooled by net/http to a temporary file, not held in memory.
func parseSampling(r *http.Request) (intake.SampleSpec, error) {
	var spec intake.SampleSpec
	if err := r.ParseMultipartForm(8 << 20); err != nil {
		return spec, badForm("reading the form: %v", err)
	}
	f := r.MultipartForm.Value
	get := func(k string) string { return strings.TrimSpace(r.FormValue(k)) }
	num := func(k string, def float64) (float64, error) {
		v := get(k)
		if v == "" {
			return def, nil
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, badForm("%s %q is not a number", k, v)
		}
		return x, nil
	}
	spec.Name = get("name")
	if spec.Name == "" {
		return spec, badForm("give the comparison a name")
	}
	if err := firstTooLong(lenCheck{"Comparison name", spec.Name, maxName}, lenCheck{"Project", get("project"), maxName},
		lenCheck{"Template", get("template"), maxName}); err != nil {
		return spec, err
	}
	def := jobs.DefaultSamplingConfig()
	cfg := jobs.SamplingConfig{Template: get("template"), TemplateText: r.FormValue("template_text")}
	var err error
	var x float64
	if x, err = num("n", float64(def.N)); err != nil {
		return spec, err
	}
	cfg.N = int(x)
	if cfg.Temperature, err = num("temperature", def.Temperature); err != nil {
		return spec, err
	}
	if cfg.TopP, err = num("top_p", def.TopP); err != nil {
		return spec, err
	}
	if cfg.MinP, err = num("min_p", 0); err != nil {
		return spec, err
	}
	if x, err = num("top_k", 0); err != nil {
		return spec, err
	}
	cfg.TopK = int(x)
	if x, err = num("max_tokens", float64(def.MaxTokens)); err != nil {
		return spec, err
	}
	cfg.MaxTokens = int(x)
	if x, err = num("limit", 0); err != nil {
		return spec, err
	}
	cfg.Limit = int(x)
	if x, err = num("per_request", jobs.DefaultPerRequest); err != nil {
		return spec, err
	}
	cfg.PerRequest = int(x)
	cfg.Adaptive = get("adaptive") != ""
	if v := get("budget"); v != "" {
		b, err := strconv.Atoi(v)
		if err != nil || b < 1 {
			return spec, badForm("Budget (samples) %q is not a positive whole number", v)
		}
		cfg.Budget = b
	}
	if v := get("seed"); v != "" {
		seed, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return spec, badForm("seed %q is not a whole number", v)
		}
		cfg.Seed = &seed
	}
	for _, line := range strings.Split(r.FormValue("stop"), "\n") {
		if line = strings.TrimRight(line, "\r"); line != "" {
			if err := tooLong(fmt.Sprintf("Stop string %d", len(cfg.Stop)+1), line, maxStopLen); err != nil {
				return spec, err
			}
			cfg.Stop = append(cfg.Stop, line)
		}
	}
	if len(cfg.Stop) > maxStops {
		return spec, badForm("Stop strings: at most %d (got %d)", maxStops, len(cfg.Stop))
	}
	if t, err := cfg.TemplateFor(); err == nil && len(cfg.Stop) == 0 {
		cfg.Stop = t.Stop
	}
	if err := cfg.Validate(); err != nil {
		return spec, badForm("sampling config: %v", err)
	}
	if t, err := cfg.TemplateFor(); err == nil {
		// The restricted template language and the prompt size limit, on a
		// stand-in problem; problem 1's prompt is checked once the dataset
		// is known.
		if _, err := sampling.Render(t, sampling.PromptData{Problem: "problem", Subject: "subject", Level: "level"}); err != nil {
			return spec, badForm("%v", err)
		}
	}
	spec.Config = cfg
	if spec.Temperatures, err = intake.ParseTemperatures(get("temperatures")); err != nil {
		return spec, badForm("%v", err)
	}
	if spec.Temperatures != nil && cfg.Adaptive {
		return spec, badForm("a temperature sweep cannot be sampled adaptively yet: leave the temperatures or adaptive sampling out")
	}

	roles, names, urls, models := f["model_role"], f["model_name"], f["model_url"], f["model_model"]
	keys, styles, concs, steps := f["model_key"], f["model_style"], f["model_concurrency"], f["model_step"]
	templates := f["model_template"]
	if len(names) > intake.MaxModels {
		return spec, badForm("a comparison has at most %d models (the base model included); the form has %d", intake.MaxModels, len(names))
	}
	if len(names) < 2 || len(urls) != len(names) || len(models) != len(names) || len(roles) != len(names) {
		return spec, badForm("give a base model and at least one other model, each with a name, base URL and model")
	}
	at := func(xs []string, i int) string {
		if i < len(xs) {
			return strings.TrimSpace(xs[i])
		}
		return ""
	}
	for i := range names {
		m := intake.EndpointModel{Name: at(names, i), Role: at(roles, i), BaseURL: at(urls, i), Model: at(models, i),
			APIKey: at(keys, i), Style: at(styles, i), Template: at(templates, i)}
		row := fmt.Sprintf("Model %d's ", i+1)
		if err := firstTooLong(lenCheck{row + "name", m.Name, maxName}, lenCheck{row + "base URL", m.BaseURL, maxURL},
			lenCheck{row + "served model", m.Model, maxModelID}, lenCheck{row + "API key", m.APIKey, maxAPIKey},
			lenCheck{row + "role", m.Role, maxName}, lenCheck{row + "style", m.Style, maxName},
			lenCheck{row + "template", m.Template, maxName}); err != nil {
			return spec, err
		}
		if c, err := strconv.Atoi(at(concs, i)); err == nil {
			m.MaxConcurrency = c
		}
		// Only non-base rows have a step field, so steps[i-1] is row i's.
		if i > 0 {
			if v := at(steps, i-1); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 || n > math.MaxInt32 {
					return spec, badForm("model %q: step %q: want a whole number from 0 to %d", m.Name, v, math.MaxInt32)
				}
				m.Step = &n
			}
		}
		if m.Role == "checkpoint" && m.Step == nil {
			return spec, badForm("model %q is an RL checkpoint without a training step: give its step, or choose \"RL model\" (a checkpoint without a step has no place on the trajectory)", m.Name)
		}
		spec.Models = append(spec.Models, m)
	}
	if fhs := r.MultipartForm.File["dataset_file"]; get("dataset_id") != "" && len(fhs) > 0 && fhs[0].Filename != "" {
		return spec, badForm(bothDatasets, fhs[0].Filename)
	}
	if id := get("dataset_id"); id != "" {
		if spec.DatasetID, err = strconv.ParseInt(id, 10, 64); err != nil {
			return spec, badForm("dataset_id %q is not a number", id)
		}
	} else if fhs := r.MultipartForm.File["dataset_file"]; len(fhs) > 0 && fhs[0].Filename != "" {
		fh := fhs[0]
		spec.Dataset = intake.File{Name: filepath.Base(fh.Filename), Open: func() (io.ReadCloser, error) { return fh.Open() }}
	} else {
		return spec, badForm("choose a loaded dataset or upload a dataset file")
	}
	return spec, nil
}

func (s *Server) createSampling(w http.ResponseWriter, r *http.Request) {
	spec, err := parseSampling(r)
	if r.MultipartForm != nil {
		defer r.MultipartForm.RemoveAll()
	}
	var fe formError
	if errors.As(err, &fe) {
		s.renderSampleForm(w, r, http.StatusBadRequest, fe.msg)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if spec.DatasetID != 0 {
		err := s.useDataset(r.Context(), currentUser(r), spec.DatasetID)
		if err == nil {
			err = s.checkFirstPrompt(r.Context(), spec.DatasetID, spec.Config)
		}
		if err == nil {
			err = s.checkBudget(r.Context(), spec)
		}
		if errors.As(err, &fe) {
			s.renderSampleForm(w, r, http.StatusBadRequest, fe.msg)
			return
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
	}
	pid, _ := strconv.ParseInt(r.FormValue("project_id"), 10, 64)
	spec.ProjectID, err = s.targetProject(r.Context(), currentUser(r), pid, r.FormValue("project"))
	if errors.Is(err, errForbidden) {
		s.deny(w, r, http.StatusForbidden, "Your role in that project does not allow adding comparisons.")
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	id, err := intake.CreateSampling(r.Context(), s.st, s.jobs, s.cfg.Secret, spec)
	if err != nil && !fromDatabase(err) {
		s.renderSampleForm(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	http.Redirect(w, r, fmt.Sprintf("/comparisons/%d", id), http.StatusSeeOther)
}

// checkFirstPrompt renders problem 1 of a loaded dataset with cfg's
// template: a form error if it cannot be rendered or is over the limit.
func (s *Server) checkFirstPrompt(ctx context.Context, datasetID int64, cfg jobs.SamplingConfig) error {
	ps, err := s.st.Problems(ctx, datasetID, true)
	if err != nil || len(ps) == 0 {
		return err
	}
	t, err := cfg.TemplateFor()
	if err != nil {
		return badForm("%v", err)
	}
	if _, err := sampling.Render(t, sampling.PromptData{Problem: ps[0].Statement, Subject: ps[0].Subject, Level: ps[0].Level}); err != nil {
		return badForm("problem 1 (%s): %v", ps[0].Key, err)
	}
	return nil
}

// checkBudget checks an adaptive config's budget against a loaded dataset:
// a form error when it does not fit. (An uploaded dataset's is checked once
// it is loaded, when sampling starts.)
func (s *Server) checkBudget(ctx context.Context, spec intake.SampleSpec) error {
	if !spec.Config.Adaptive {
		return nil
	}
	d, err := s.st.GetDataset(ctx, spec.DatasetID)
	if err != nil {
		return err
	}
	if err := spec.Config.CheckBudget(len(spec.Models), d.ProblemCount); err != nil {
		return badForm("%v", err)
	}
	return nil
}

// setupView renders the config and the first problem's prompt.
func (s *Server) setupView(ctx context.Context, c store.Comparison) (views.SetupView, error) {
	v := views.SetupView{C: c}
	cfg, err := jobs.ParseSamplingConfig(c.Sampling)
	if err != nil {
		return v, err
	}
	v.Config = fmt.Sprintf("n = %d per problem, temperature %g, top-p %g, max %d tokens, prompt template %s",
		cfg.N, cfg.Temperature, cfg.TopP, cfg.MaxTokens, cfg.Template)
	if cfg.TopK != 0 {
		v.Config += fmt.Sprintf(", top-k %d", cfg.TopK)
	}
	if cfg.MinP != 0 {
		v.Config += fmt.Sprintf(", min-p %g", cfg.MinP)
	}
	if cfg.Seed != nil {
		v.Config += fmt.Sprintf(", seed %d", *cfg.Seed)
	}
	if len(cfg.Stop) > 0 {
		v.Config += fmt.Sprintf(", stop %q", cfg.Stop)
	}
	if cfg.Limit > 0 {
		v.Config += fmt.Sprintf(", first %d problems", cfg.Limit)
	}
	if c.DatasetID == nil {
		return v, nil
	}
	ps, err := s.st.Problems(ctx, *c.DatasetID, true)
	if err != nil || len(ps) == 0 {
		return v, err
	}
	if cfg.Adaptive {
		models := 0
		for _, r := range c.Runs {
			if r.Endpoint.BaseURL != "" {
				models++
			}
		}
		v.Adaptive, v.BudgetError = adaptiveLine(cfg, models, len(ps))
	}
	for _, run := range c.Runs {
		rc, err := cfg.ForRun(run)
		if err != nil {
			v.Error = err.Error()
			return v, nil
		}
		t, err := rc.TemplateFor()
		if err != nil {
			v.Error = err.Error()
			return v, nil
		}
		p, err := sampling.Render(t, sampling.PromptData{Problem: ps[0].Statement, Subject: ps[0].Subject, Level: ps[0].Level})
		if err != nil {
			v.Error = err.Error()
			return v, nil
		}
		v.Prompts = append(v.Prompts, views.ModelPrompt{RunID: run.ID, Model: run.ModelName, Template: t.Name, Prompt: p})
	}
	return v, nil
}

// promptFor is the rendered first prompt of one run in a setup view.
func promptFor(v views.SetupView, runID int64) string {
	for _, p := range v.Prompts {
		if p.RunID == runID {
			return p.Prompt
		}
	}
	return ""
}

// testConnection sends one tiny request to a run's endpoint and shows the
// reply or the exact error.
func (s *Server) testConnection(w http.ResponseWriter, r *http.Request) {
	id, err := idParam(r, "id")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rid, err := idParam(r, "rid")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	c, err := s.st.GetComparison(r.Context(), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for _, run := range c.Runs {
		if run.ID != rid {
			continue
		}
		key := ""
		if len(run.Endpoint.APIKeyEnc) > 0 && s.cfg.Secret != nil {
			if key, err = s.cfg.Secret.OpenFor(run.Endpoint.APIKeyEnc, run.Endpoint.BaseURL); err != nil {
				s.render(w, r, http.StatusOK, views.TestResult("", err.Error()))
				return
			}
		}
		if run.Endpoint.BaseURL == "" {
			s.render(w, r, http.StatusOK, views.TestResult("", "This model's samples were imported: it has no endpoint to test."))
			return
		}
		// The first problem's prompt also tries the template on the server;
		// a template that cannot be rendered is reported, not replaced.
		prompt := ""
		if c.Sampling != nil {
			v, err := s.setupView(r.Context(), c)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			if v.Error != "" {
				s.render(w, r, http.StatusOK, views.TestResult("", "The prompt template cannot be rendered: "+v.Error))
				return
			}
			prompt = promptFor(v, run.ID)
		}
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		reply, err := sampling.TestConnection(ctx, sampling.Endpoint{BaseURL: run.Endpoint.BaseURL, Model: run.Endpoint.Model,
			APIKey: key, Style: sampling.Style(run.Endpoint.Style)}, prompt)
		if err != nil {
			s.render(w, r, http.StatusOK, views.TestResult("", err.Error()))
			return
		}
		s.render(w, r, http.StatusOK, views.TestResult(reply, ""))
		return
	}
	s.fail(w, r, fmt.Errorf("run %d of comparison %d: %w", rid, id, store.ErrNotFound))
}

// samplingAction runs start, pause, resume, cancel or extend.
func (s *Server) samplingAction(action string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		id, err := idParam(r, "id")
		if err != nil {
			s.fail(w, r, err)
			return
		}
		c, err := s.st.GetComparison(ctx, id)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if c.Sampling == nil {
			s.render(w, r, http.StatusConflict, views.ErrorPage(409, "Not sampled", "This comparison was imported, not sampled from endpoints."))
			return
		}
		conflict := func(want string) {
			s.render(w, r, http.StatusConflict, views.ErrorPage(409, "Cannot "+action, fmt.Sprintf("The comparison is %s; %s needs it %s.", c.Status, action, want)))
		}
		if action == "start" || action == "resume" || action == "extend" {
			// Nothing is sent with a prompt template that cannot render
			// problem 1 (a restricted construct, or a prompt over the limit).
			v, err := s.setupView(ctx, c)
			if err != nil {
				s.fail(w, r, err)
				return
			}
			if v.Error != "" {
				s.render(w, r, http.StatusBadRequest, views.ErrorPage(400, "Cannot "+action, "The prompt of problem 1 cannot be rendered: "+v.Error))
				return
			}
		}
		switch action {
		case "start":
			if c.Status != store.StatusConfigured {
				conflict("configured")
				return
			}
			err = jobs.ResumeSampling(ctx, s.jobs, s.st, id)
		case "pause":
			if c.Status != store.StatusSampling {
				conflict("sampling")
				return
			}
			err = jobs.PauseSampling(ctx, s.jobs, s.st, id)
		case "resume":
			if c.Status != store.StatusPaused && c.Status != store.StatusFailed {
				conflict("paused or failed")
				return
			}
			err = jobs.ResumeSampling(ctx, s.jobs, s.st, id)
			if errors.Is(err, jobs.ErrSamplingStopping) {
				s.render(w, r, http.StatusConflict, views.ErrorPage(409, "Cannot retry yet", "Sampling is still stopping: try again in a minute."))
				return
			}
			if errors.Is(err, jobs.ErrNothingToRetry) {
				s.render(w, r, http.StatusConflict, views.ErrorPage(409, "Cannot retry", "Every sample of this comparison was drawn; it failed afterwards, for the reason on its page."))
				return
			}
		case "cancel":
			if c.Status != store.StatusSampling && c.Status != store.StatusPaused {
				conflict("sampling or paused")
				return
			}
			err = jobs.CancelSampling(ctx, s.jobs, s.st, id)
		case "extend":
			if c.Status != store.StatusReady {
				conflict("ready")
				return
			}
			err = s.extend(ctx, r, c)
		}
		var fe formError
		if errors.As(err, &fe) {
			s.render(w, r, http.StatusBadRequest, views.ErrorPage(400, "Cannot "+action, fe.msg))
			return
		}
		var be *jobs.BudgetError
		if errors.As(err, &be) {
			s.render(w, r, http.StatusBadRequest, views.ErrorPage(400, "Cannot "+action, be.Error()))
			return
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/comparisons/%d", id), http.StatusSeeOther)
	}
}

// adaptiveLine describes an adaptive config's budget against the uniform
// design for the setup page, and says when the budget does not fit.
func adaptiveLine(cfg jobs.SamplingConfig, models, problems int) (line, problem string) {
	if cfg.Limit > 0 && cfg.Limit < problems {
		problems = cfg.Limit
	}
	line = fmt.Sprintf("Adaptive: a pilot round, then rounds where more samples most narrow the pass@k curves, up to n = %d per problem; budget %s samples of the uniform design's %s (n × %d models × %s problems)",
		cfg.N, jobs.Grouped(cfg.Budget), jobs.Grouped(cfg.N*models*problems), models, jobs.Grouped(problems))
	if err := cfg.CheckBudget(models, problems); err != nil {
		problem = err.Error()
	}
	return line, problem
}

// extend raises n: only the missing samples are drawn, and the curves grow
// to the new k. On an adaptive comparison it raises the budget instead (and
// n when a higher one is given), and the design plans more rounds.
func (s *Server) extend(ctx context.Context, r *http.Request, c store.Comparison) error {
	cfg, err := jobs.ParseSamplingConfig(c.Sampling)
	if err != nil {
		return err
	}
	if cfg.Adaptive {
		b, err := strconv.Atoi(strings.TrimSpace(r.FormValue("budget")))
		if err != nil || b <= cfg.Budget {
			return badForm("the new budget must be a whole number of samples above the current %s", jobs.Grouped(cfg.Budget))
		}
		if v := strings.TrimSpace(r.FormValue("n")); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < cfg.N || n > 65536 {
				return badForm("the target n must be a whole number from the current n = %d to 65,536", cfg.N)
			}
			cfg.N = n
		}
		cfg.Budget = b
		return s.restartSampling(ctx, c, cfg)
	}
	n, err := strconv.Atoi(strings.TrimSpace(r.FormValue("n")))
	if err != nil || n <= cfg.N || n > 65536 {
		return badForm("the new n must be a whole number above the current n = %d (at most 65,536)", cfg.N)
	}
	cfg.N = n
	return s.restartSampling(ctx, c, cfg)
}

// restartSampling stores a comparison's new sampling config and starts
// sampling on it, in one transaction (a config StartSampling refuses is not
// kept).
func (s *Server) restartSampling(ctx context.Context, c store.Comparison, cfg jobs.SamplingConfig) error {
	return s.st.WithTx(ctx, func(tx *store.Store) error {
		if err := tx.SetSamplingConfig(ctx, c.ID, cfg); err != nil {
			return err
		}
		var err error
		if c.Sampling, err = json.Marshal(cfg); err != nil {
			return err
		}
		return jobs.StartSampling(ctx, s.jobs, tx, c)
	})
}

// samplingRows computes rates and ETAs for the progress page.
func samplingRows(c store.Comparison, ps map[int64]store.SamplingProgress) []views.SamplingRow {
	var rows []views.SamplingRow
	for _, run := range c.Runs {
		p, ok := ps[run.ID]
		if !ok {
			continue
		}
		row := views.SamplingRow{Run: run, P: p}
		if p.Target > 0 {
			row.Percent = int(100 * p.Samples / p.Target)
		}
		if run.Usage.StartedAt != nil {
			if el := time.Since(*run.Usage.StartedAt).Seconds(); el > 0 {
				row.Rate = float64(p.Samples) / el
			}
		}
		if row.Rate > 0 && p.Target > p.Samples && c.Status == store.StatusSampling {
			row.ETA = time.Duration(float64(p.Target-p.Samples) / row.Rate * float64(time.Second))
		}
		rows = append(rows, row)
	}
	return rows
}
