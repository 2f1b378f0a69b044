package metrics

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// JobCount is the number of unfinished River jobs of one kind in one queue
// and state, and how long the oldest of them has waited to run (seconds
// since it was scheduled).
type JobCount struct {
	Kind, Queue, State string
	Count              int64
	OldestSeconds      float64
}

// Queues are River's queues Reach works; any other (the private queue of a
// `reach import` process) is labelled "local".
var Queues = []string{"default", "sampling", "stats", "repair"}

// unfinished are River's states of a job that has not ended.
var unfinished = []string{"available", "scheduled", "retryable", "running", "pending"}

// queueCollector reads River's jobs from Postgres at every scrape, so any
// server counts the work of every worker process sharing its database.
type queueCollector struct {
	count   func(context.Context) ([]JobCount, error)
	kinds   []string
	timeout time.Duration
	log     *slog.Logger

	jobs, depth, oldest, up *prometheus.Desc
}

// NewQueueCollector returns a collector of the unfinished River jobs count
// returns (from Postgres), by kind (one of kinds, else "other"), queue and state, with a
// scrape's query bounded by timeout (0 means 3 s). Finished jobs are counted
// by each process as it works them (reach_river_jobs_finished_total):
// counting them here would read a table of a day's finished jobs at every
// scrape.
func NewQueueCollector(count func(context.Context) ([]JobCount, error), kinds []string, timeout time.Duration, log *slog.Logger) prometheus.Collector {
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	if log == nil {
		log = slog.Default()
	}
	return &queueCollector{count: count, kinds: kinds, timeout: timeout, log: log,
		jobs: prometheus.NewDesc("reach_river_jobs", "Unfinished River jobs in Postgres (every process's), by kind and state "+
			"(available, scheduled, retryable, running, pending).", []string{"kind", "state"}, nil),
		depth: prometheus.NewDesc("reach_river_queue_depth", "River jobs ready to run and waiting for a worker (state available), by queue.",
			[]string{"queue"}, nil),
		oldest: prometheus.NewDesc("reach_river_queue_oldest_seconds", "How long the oldest job ready to run has waited, by queue (0 when none waits).",
			[]string{"queue"}, nil),
		up: prometheus.NewDesc("reach_river_jobs_up", "1 when the last scrape could count River's jobs in Postgres, else 0.", nil, nil),
	}
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.jobs
	ch <- c.depth
	ch <- c.oldest
	ch <- c.up
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	counts, err := c.count(ctx)
	if err != nil {
		c.log.Warn("metrics: count River jobs", "err", err)
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	type ks struct{ kind, state string }
	jobs := map[ks]float64{}
	depth, oldest := map[string]float64{}, map[string]float64{}
	for _, q := range slices.Concat(Queues, []string{"local"}) { // every queue, 0 when empty
		depth[q], oldest[q] = 0, 0
	}
	for _, k := range c.kinds {
		for _, s := range unfinished {
			jobs[ks{k, s}] = 0
		}
	}
	for _, n := range counts {
		state := oneOf(n.State, unfinished)
		jobs[ks{oneOf(n.Kind, c.kinds), state}] += float64(n.Count)
		if state != "available" {
			continue
		}
		q := n.Queue
		if oneOf(q, Queues) == "other" {
			q = "local"
		}
		depth[q] += float64(n.Count)
		oldest[q] = max(oldest[q], n.OldestSeconds)
	}
	for k, v := range jobs {
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, v, k.kind, k.state)
	}
	for q, v := range depth {
		ch <- prometheus.MustNewConstMetric(c.depth, prometheus.GaugeValue, v, q)
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, oldest[q], q)
	}
}
