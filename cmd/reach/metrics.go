package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reach-lab/reach/internal/metrics"
)

// metricsAddrFlag adds --metrics-addr (env REACH_METRICS_ADDR) to fs.
func metricsAddrFlag(fs *flag.FlagSet) *string {
	return fs.String("metrics-addr", os.Getenv("REACH_METRICS_ADDR"),
		"listen address for Prometheus metrics at /metrics, e.g. 127.0.0.1:9464; empty: no metrics (env REACH_METRICS_ADDR)")
}

// serveMetrics serves GET /metrics on addr, a listener of its own (never
// the dashboard's address: it needs no sign-in, so only what should scrape
// it may reach it), until stop is called: this process's collectors and
// extra. With addr empty it does nothing. It returns once it listens, so
// a bad address stops the command at once.
func serveMetrics(addr string, extra ...prometheus.Collector) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics.Handler(extra...))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("metrics server stopped", "addr", addr, "err", err)
		}
	}()
	slog.Info("Prometheus metrics", "url", "http://"+displayAddr(ln.Addr().String())+"/metrics")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
