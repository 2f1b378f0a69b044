package replay_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/replay"
	"github.com/reach-lab/reach/internal/sampling"
	"github.com/reach-lab/reach/internal/testfiles"
)

// When REPLAY_BENCH_SERVER is set, the test binary is the benchmark's replay
// server: it prints its address, serves until stdin closes, and exits. Running
// it in its own process keeps its CPU out of the client's getrusage figures.
func TestMain(m *testing.M) {
	if os.Getenv("REPLAY_BENCH_SERVER") != "" {
		os.Exit(benchServer())
	}
	os.Exit(m.Run())
}

func benchServer() int {
	// The benchmark measures the server, not the data: the carried stand-in.
	dir, err := os.MkdirTemp("", "reach-replay-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(dir)
	if err := testfiles.WriteStandIn(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	samples, err := replay.Load(context.Background(), filepath.Join(dir, "results_1024_cuda/sft_raw.jsonl"), filepath.Join(dir, "data/gsm8k_subset.jsonl"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	lat, err := time.ParseDuration(os.Getenv("REPLAY_BENCH_SERVER"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(ln.Addr().String())
	ctx, cancel := context.WithCancel(context.Background())
	go func() { io.Copy(io.Discard, os.Stdin); cancel() }()
	if err := replay.Serve(ctx, ln, replay.New(samples, replay.Options{ModelName: "sft", Latency: lat})); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startServerProcess runs the replay server (50 ms latency) in a child
// process and returns its base URL and a stop function that waits for it and
// returns the CPU time the child used.
func startServerProcess(b *testing.B) (string, func() time.Duration) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "REPLAY_BENCH_SERVER=50ms")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		b.Fatal(err)
	}
	return "http://" + strings.TrimSpace(addr), func() time.Duration {
		stdin.Close()
		cmd.Wait()
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSampleThroughReplay measures the sampling client against the replay
// server (50 ms latency, its own process) over loopback TCP: requests per
// second with the endpoint's concurrency limit saturated, and the CPU this
// process (Reach's side: prompt rendering, JSON, HTTP, limiter) used per
// second of wall time ("cpu-cores"; the target is < 0.5 at >= 200
// req/s). The replay server's own CPU is reported as server-cpu-cores. Run
// with e.g. -benchtime=3000x for steady figures.
func BenchmarkSampleThroughReplay(b *testing.B) {
	for _, tc := range []struct{ conc, n int }{{16, 1}, {32, 1}, {32, 8}} {
		b.Run(fmt.Sprintf("conc%d/n%d", tc.conc, tc.n), func(b *testing.B) {
			url, stop := startServerProcess(b)
			stopped := false
			defer func() {
				if !stopped {
					stop()
				}
			}()
			_, rec := loadSFT(b)
			tmpl, _ := sampling.Preset("qwen-boxed")
			c := client(b, url, sampling.StyleCompletions, tc.conc)
			p := sampling.DefaultParams()
			p.N = tc.n

			var next atomic.Int64
			var failed atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			cpu0, t0 := cpuTime(), time.Now()
			for range 2 * tc.conc { // more callers than slots: the limiter is the bottleneck
				wg.Go(func() {
					for {
						i := next.Add(1) - 1
						if i >= int64(b.N) {
							return
						}
						prompt, err := sampling.Render(tmpl, sampling.PromptData{Problem: rec[i%int64(len(rec))].question})
						if err != nil {
							failed.Add(1)
							continue
						}
						if _, _, err := c.Sample(context.Background(), prompt, p); err != nil {
							failed.Add(1)
						}
					}
				})
			}
			wg.Wait()
			wall, cpu := time.Since(t0), cpuTime()-cpu0
			b.StopTimer()
			stopped = true
			serverCPU := stop() // includes its start-up (loading the samples file)
			if failed.Load() > 0 {
				b.Fatalf("%d of %d requests failed", failed.Load(), b.N)
			}
			b.ReportMetric(float64(b.N)/wall.Seconds(), "req/s")
			b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cpu-cores")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/req")
			b.ReportMetric(serverCPU.Seconds()/wall.Seconds(), "server-cpu-cores")
		})
	}
}
