package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/replay"
	"github.com/reach-lab/reach/internal/sampling"
	"github.com/reach-lab/reach/internal/secret"
)

// endpointFlags collects --base/--model NAME=URL#MODEL in order.
type endpointFlags struct{ models []intake.EndpointModel }

func (e *endpointFlags) add(role string) func(string) error {
	return func(v string) error {
		name, url, model, err := intake.ParseEndpointFlag(v)
		if err != nil {
			return err
		}
		m := intake.EndpointModel{Name: name, Role: role, BaseURL: url, Model: model}
		if role == "base" {
			if len(e.models) > 0 && e.models[0].Role == "base" {
				return errors.New("only one --base")
			}
			e.models = append([]intake.EndpointModel{m}, e.models...)
		} else {
			e.models = append(e.models, m)
		}
		return nil
	}
}

func runSample(ctx context.Context, args []string, stdout io.Writer) error {
	fs, dbURL := newFlags("sample", os.Stderr)
	var ef endpointFlags
	def := jobs.DefaultSamplingConfig()
	dataset := fs.String("dataset", "", "dataset JSONL file (problems with reference answers)")
	name := fs.String("name", "", "comparison name")
	n := fs.Int("n", def.N, "samples per problem")
	limit := fs.Int("limit", 0, "sample only the first PROBLEMS problems (0 = all)")
	temp := fs.Float64("temperature", def.Temperature, "sampling temperature (Yue et al.: 0.6)")
	temps := fs.String("temperatures", "", "a temperature sweep, e.g. \"0.6,1.0,1.2\": every model is sampled once per temperature, as runs named NAME@T=1.0")
	topP := fs.Float64("top-p", def.TopP, "nucleus sampling top-p (Yue et al.: 0.95)")
	topK := fs.Int("top-k", 0, "top-k (vLLM/SGLang extra field; 0 = unset)")
	minP := fs.Float64("min-p", 0, "min-p (vLLM/SGLang extra field; 0 = unset)")
	maxTokens := fs.Int("max-tokens", def.MaxTokens, "completion token budget per sample")
	tmpl := fs.String("template", def.Template, "prompt template: "+strings.Join(sampling.PresetNames(), ", "))
	style := fs.String("style", "completions", "API style of every endpoint: completions or chat")
	apiKey := fs.String("api-key", os.Getenv("REACH_ENDPOINT_API_KEY"), "API key for the endpoints (env REACH_ENDPOINT_API_KEY)")
	conc := fs.Int("concurrency", 16, "requests in flight per endpoint")
	perReq := fs.Int("per-request", jobs.DefaultPerRequest, "completions asked for in one request (n); 1 for servers that ignore n")
	wait := fs.Bool("wait", false, "work the jobs in this process and wait until the comparison is ready")
	adaptiveOn := fs.Bool("adaptive", false, "adaptive sampling: a pilot round for every model and problem, then rounds that give the rest of --budget "+
		"where more samples most narrow the pass@k curves; --n is then the target n, which no problem goes past")
	budget := fs.Int("budget", 0, "with --adaptive: total samples over all models and problems, between 2 per model and problem and the uniform n × models × problems")
	var seed *int64
	fs.Func("seed", "sampling seed (optional): each sample is requested with its own seed derived from this one, "+
		"the problem and the sample index, so re-sampling gives the same texts", func(v string) error {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("seed %q is not a whole number", v)
		}
		seed = &s
		return nil
	})
	fs.Func("base", "base model endpoint, NAME=URL#MODEL (e.g. base=http://127.0.0.1:8000/v1#Qwen/Qwen2.5-7B)", ef.add("base"))
	fs.Func("model", "other model endpoint, NAME=URL#MODEL (repeatable)", ef.add("rl"))
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	roles := make([]string, len(ef.models))
	for i, m := range ef.models {
		roles[i] = m.Role
	}
	if err := missingFlags("reach sample", "URL#MODEL", *dataset, *name, roles); err != nil {
		return err
	}
	budgetSet := false
	fs.Visit(func(f *flag.Flag) { budgetSet = budgetSet || f.Name == "budget" })
	if *budget < 0 {
		return fmt.Errorf("--budget %d is negative: give the total samples over all models and problems", *budget)
	}
	if budgetSet && !*adaptiveOn {
		return errors.New("--budget applies only to adaptive sampling: add --adaptive, or leave --budget out")
	}
	if *adaptiveOn && *budget == 0 {
		return errors.New("--adaptive needs --budget: the total samples over all models and problems (e.g. half of n × models × problems)")
	}
	for i := range ef.models {
		ef.models[i].Style, ef.models[i].APIKey, ef.models[i].MaxConcurrency = *style, *apiKey, *conc
	}
	sweep, err := intake.ParseTemperatures(*temps)
	if err != nil {
		return err
	}
	if sweep != nil && *adaptiveOn {
		return errors.New("--temperatures and --adaptive: a temperature sweep cannot be sampled adaptively yet")
	}
	cfg := jobs.SamplingConfig{N: *n, Temperature: *temp, TopP: *topP, TopK: *topK, MinP: *minP, MaxTokens: *maxTokens,
		Template: *tmpl, Limit: *limit, PerRequest: *perReq, Seed: seed, Adaptive: *adaptiveOn, Budget: *budget}
	if t, err := cfg.TemplateFor(); err == nil {
		cfg.Stop = t.Stop
	}
	if cfg.Adaptive {
		// Checked before anything is stored: the comparison would otherwise
		// fail only once its dataset is loaded.
		if err := cfg.Validate(); err != nil {
			return fmt.Errorf("sampling config: %w", err)
		}
		problems, err := countProblems(ctx, *dataset)
		if err != nil {
			return err
		}
		if err := cfg.CheckBudget(len(ef.models), problems); err != nil {
			return err
		}
	}
	st, err := openStore(ctx, *dbURL, false)
	if err != nil {
		return err
	}
	defer st.Close()
	box, err := secret.Load()
	if err != nil {
		return err
	}
	client, stop, err := cliJobs(ctx, st, box, *wait, "")
	if err != nil {
		return err
	}
	defer stop()
	id, err := intake.CreateSampling(ctx, st, client, box, intake.SampleSpec{Name: *name, Dataset: intake.LocalFile(*dataset),
		Models: ef.models, Config: cfg, Temperatures: sweep, AutoStart: true})
	if err != nil {
		return err
	}
	if *wait {
		start := time.Now()
		if err := waitReady(ctx, st, id); err != nil {
			return err
		}
		slog.Info("sampled comparison", "id", id, "duration", time.Since(start).Round(time.Millisecond))
	}
	fmt.Fprintln(stdout, id)
	return nil
}

// countProblems reads a dataset file and returns how many problems it holds.
func countProblems(ctx context.Context, path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	err = ingest.ReadDataset(f, filepath.Base(path), func(ingest.Problem) error {
		n++
		return ctx.Err()
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

func runReplayServer(ctx context.Context, args []string) error {
	fs, _ := newFlags("replay-server", os.Stderr)
	samples := fs.String("samples", "", "samples file whose recorded completions are replayed (optional for a judge or scoring server)")
	dataset := fs.String("dataset", "", "dataset file, to match prompts to problems (with --samples)")
	addr := fs.String("addr", "127.0.0.1:8001", "listen address")
	latency := fs.Duration("latency", 50*time.Millisecond, "added latency per request")
	errRate := fs.Float64("error-rate", 0, "share of requests answered 429 or 500, in [0, 1]")
	seed := fs.Int64("seed", 1, "seed of the injected errors")
	model := fs.String("model", "", "the one model name to accept (empty: any)")
	judge := fs.String("judge", "", "judge labels file (JSONL of {completion, verdict, reason}; verdict valid/flawed/unsure, or correct/incorrect for the verifier audit): answer every request as a judge model")
	judgeDefault := fs.String("judge-default", "unsure", "verdict for a completion without a label (valid, flawed, unsure, correct, incorrect, or none: a reply without a VERDICT line)")
	logprobs := fs.String("logprobs", "both", "prompt log-probabilities offered: both, echo, prompt_logprobs or none")
	ignoreSeed := fs.Bool("ignore-seed", false, "hand out the recorded completions in order also to requests with a seed "+
		"(a recording in random order then replays as draws without replacement)")
	favour := fs.String("favour", "", "comma-separated tokens given log-probability -0.01 (a second server with --favour plays an RL model differing from the base at those tokens)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if (*samples == "") != (*dataset == "") {
		fs.Usage()
		return errors.New("--samples and --dataset go together")
	}
	opts := replay.Options{Latency: *latency, ErrorRate: *errRate, Seed: *seed, ModelName: *model, JudgeDefault: *judgeDefault,
		IgnoreSeed: *ignoreSeed}
	if *favour != "" {
		opts.Favour = strings.Split(*favour, ",")
	}
	switch *logprobs {
	case "both":
	case replay.LogprobsEcho, replay.LogprobsPrompt, replay.LogprobsNone:
		opts.Logprobs = *logprobs
	default:
		return fmt.Errorf("--logprobs %q: want both, echo, prompt_logprobs or none", *logprobs)
	}
	switch *judgeDefault {
	case "valid", "flawed", "unsure", "correct", "incorrect", replay.JudgeNoVerdict:
	default:
		return fmt.Errorf("--judge-default %q: want valid, flawed, unsure, correct, incorrect or none", *judgeDefault)
	}
	var recs map[string][]string
	var err error
	if *samples != "" {
		if recs, opts.FinishReasons, err = replay.LoadRecordings(ctx, *samples, *dataset); err != nil {
			return err
		}
	}
	if *judge != "" {
		if opts.Judge, err = replay.LoadJudgeLabels(*judge); err != nil {
			return err
		}
	}
	h := replay.New(recs, opts)
	slog.Info("replay server up", "url", "http://"+*addr+"/v1", "problems", len(recs), "judge_labels", len(opts.Judge),
		"logprobs", *logprobs, "latency", *latency, "error_rate", *errRate)
	return replay.ListenAndServe(ctx, *addr, h)
}
