// Package metrics defines Reach's Prometheus collectors and serves them in
// the Prometheus text format. Every collector lives in one registry of this
// process (not Prometheus' global default one); the code that does the work
// counts it through the functions here.
//
// No label holds a user-controlled string: HTTP requests are labelled by
// chi's route pattern ("/comparisons/{id}"), never the path; jobs by their
// kind (fixed Go strings); everything else by a small fixed set of
// outcomes. Each function below maps a value outside its set to "other".
package metrics

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
)

// registry holds the process-wide collectors; Handler adds the per-server
// ones (River's queue) in a registry of its own.
var registry = prometheus.NewRegistry()

func register[C prometheus.Collector](c C) C {
	registry.MustRegister(c)
	return c
}

func init() {
	registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

var (
	httpRequests = register(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reach_http_requests_total",
		Help: "HTTP requests answered, by chi route pattern (\"unmatched\" when no route matched), method and status code.",
	}, []string{"route", "method", "code"}))
	httpDuration = register(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "reach_http_request_duration_seconds",
		Help:    "Time to answer an HTTP request, by chi route pattern and method.",
		Buckets: prometheus.DefBuckets,
	}, []string{"route", "method"}))

	jobsFinished = register(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reach_river_jobs_finished_total",
		Help: "River job attempts worked by this process, by job kind and outcome (completed, retry, discarded, cancelled, snoozed).",
	}, []string{"kind", "outcome"}))
	jobDuration = register(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "reach_river_job_duration_seconds",
		Help: "Time one River job attempt took in this process, by job kind and outcome.",
		// 10 ms to about 11 hours: a sampling chunk takes seconds, an
		// import of millions of samples hours.
		Buckets: prometheus.ExponentialBuckets(0.01, 4, 12),
	}, []string{"kind", "outcome"}))

	samplesImported = register(prometheus.NewCounter(prometheus.CounterOpts{
		Name: "reach_samples_imported_total",
		Help: "Samples stored by imports of files (committed).",
	}))
	samplesVerified = register(prometheus.NewCounter(prometheus.CounterOpts{
		Name: "reach_samples_verified_total",
		Help: "Samples graded by Reach's verifiers (at import, by verification jobs and as they are sampled; committed).",
	}))
	samplesSampled = register(prometheus.NewCounter(prometheus.CounterOpts{
		Name: "reach_samples_sampled_total",
		Help: "Samples drawn from inference endpoints and stored.",
	}))

	sandboxRuns = register(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reach_sandbox_runs_total",
		Help: "Programs run in the code sandbox, by outcome (" + strings.Join(sandboxOutcomes, ", ") + ").",
	}, []string{"outcome"}))
	sandboxDuration = register(prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "reach_sandbox_run_duration_seconds",
		Help:    "Wall-clock time of one sandboxed program run.",
		Buckets: prometheus.DefBuckets,
	}))

	endpointRequests = register(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reach_endpoint_requests_total",
		Help: "HTTP requests sent to inference endpoints (each attempt, retries included), by call: completion (sampling, judging, connection tests) or logprobs (scoring).",
	}, []string{"call"}))
	endpointErrors = register(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reach_endpoint_errors_total",
		Help: "Failed requests to inference endpoints, by call and error kind (rate_limit, server, timeout, connection, bad_request, auth, other).",
	}, []string{"call", "kind"}))
	endpointDuration = register(prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "reach_endpoint_request_duration_seconds",
		Help:    "Time one request to an inference endpoint took, by call.",
		Buckets: prometheus.ExponentialBuckets(0.05, 2, 14), // 50 ms to about 7 minutes
	}, []string{"call"}))

	reportLookups = register(prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "reach_report_cache_lookups_total",
		Help: "Comparison reports asked of the report cache, by where the report came from: memory (hit), stored (hit in Postgres) or computed (miss).",
	}, []string{"result"}))
	reportCompute = register(prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "reach_report_compute_seconds",
		Help:    "Time to compute one comparison report on a cache miss (once per computation, however many requests waited for it).",
		Buckets: prometheus.ExponentialBuckets(0.01, 3, 10), // 10 ms to about 3 minutes
	}))
)

// Handler serves every collector of this process, and extra (e.g.
// NewQueueCollector), in the Prometheus text format. A collector that fails
// is reported in the response and the others are still served.
func Handler(extra ...prometheus.Collector) http.Handler {
	own := prometheus.NewRegistry()
	own.MustRegister(extra...)
	return promhttp.HandlerFor(prometheus.Gatherers{registry, own}, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError,
		Timeout:       10 * time.Second,
	})
}

// JobFinished counts one River job attempt of kind (a registered kind; see
// the jobs package) that ended with outcome after d.
func JobFinished(kind, outcome string, d time.Duration) {
	outcome = oneOf(outcome, jobOutcomes)
	jobsFinished.WithLabelValues(kind, outcome).Inc()
	jobDuration.WithLabelValues(kind, outcome).Observe(d.Seconds())
}

var jobOutcomes = []string{"completed", "retry", "discarded", "cancelled", "snoozed"}

// SamplesImported counts n samples stored by an import (after its commit).
func SamplesImported(n int64) { samplesImported.Add(float64(max(n, 0))) }

// SamplesVerified counts n samples graded by a verifier (after their commit).
func SamplesVerified(n int64) { samplesVerified.Add(float64(max(n, 0))) }

// SamplesSampled counts n samples drawn from an endpoint and stored.
func SamplesSampled(n int64) { samplesSampled.Add(float64(max(n, 0))) }

// Sandbox outcomes, in the order a run's result is read.
var sandboxOutcomes = []string{
	"unavailable",  // the sandbox does not work on this machine
	"setup_error",  // bubblewrap or the interpreter did not start, or the run was cancelled
	"cpu_timeout",  // the CPU-time limit
	"wall_timeout", // the wall-clock limit
	"output_limit", // too much output
	"reported",     // the test harness reported and Reach ended the run
	"signal",       // killed by a signal
	"exit_ok",      // exit status 0
	"exit_error",   // any other exit status
}

// SandboxRun counts one sandboxed run that ended with outcome (one of the
// sandbox outcomes above) after wall.
func SandboxRun(outcome string, wall time.Duration) {
	sandboxRuns.WithLabelValues(oneOf(outcome, sandboxOutcomes)).Inc()
	sandboxDuration.Observe(wall.Seconds())
}

var (
	endpointCalls = []string{"completion", "logprobs"}
	errorKinds    = []string{"rate_limit", "server", "timeout", "connection", "bad_request", "auth", "other"}
)

// EndpointRequest counts one request (attempt) of call ("completion" or
// "logprobs") to an inference endpoint that took d and failed with an error
// of errKind (the sampling package's error kinds), or succeeded when errKind
// is "".
func EndpointRequest(call, errKind string, d time.Duration) {
	call = oneOf(call, endpointCalls)
	endpointRequests.WithLabelValues(call).Inc()
	endpointDuration.WithLabelValues(call).Observe(d.Seconds())
	if errKind != "" {
		endpointErrors.WithLabelValues(call, oneOf(errKind, errorKinds)).Inc()
	}
}

// ReportLookup counts one request for a report that the cache answered
// from result: "memory", "stored" (Postgres) or "computed".
func ReportLookup(result string) {
	reportLookups.WithLabelValues(oneOf(result, []string{"memory", "stored", "computed"})).Inc()
}

// ReportComputed times one computation of a report on a cache miss.
func ReportComputed(d time.Duration) { reportCompute.Observe(d.Seconds()) }

// oneOf returns v when it is in set, else "other": a label never takes a
// value outside a fixed set.
func oneOf(v string, set []string) string {
	for _, s := range set {
		if v == s {
			return v
		}
	}
	return "other"
}

// codeLabel is an HTTP status code as a label (0, nothing written, is 200).
func codeLabel(code int) string {
	if code == 0 {
		code = http.StatusOK
	}
	if code < 100 || code > 599 {
		return "other"
	}
	return strconv.Itoa(code)
}

// Snapshot returns the current value of every series of the process-wide
// collectors, keyed as the text format writes them
// (`reach_http_requests_total{code="200",method="GET",route="/"}`;
// histograms as their _bucket, _sum and _count series): for tests that
// check what some work counted.
func Snapshot() (map[string]float64, error) {
	mfs, err := registry.Gather()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return nil, err
		}
	}
	out := map[string]float64{}
	for line := range strings.Lines(buf.String()) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			return nil, fmt.Errorf("metrics snapshot: %q: %w", line, err)
		}
		out[line[:i]] = v
	}
	return out, nil
}
