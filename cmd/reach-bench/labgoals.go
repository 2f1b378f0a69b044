package main

// The end of `reach-bench lab`: issue 28's goals against what the run
// measured, and the machine's load average over each phase (the latencies
// at 20 clients depend on it).

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// Issue 28's goals ("Done when").
const (
	pageGoal     = 100 * time.Millisecond // every page's p95 at 20 clients, text searches included
	goalClients  = 20
	importGoal   = 1.0 // the import's speed as a share of raw COPY's
	rssGoal      = 500_000_000
	importFileGB = 1.5e9 // "one 1.5 GB file"
	// labSamplesGoal is "10 M stored samples": scale 1 stores 9,968,000.
	labSamplesGoal = 9_900_000
)

// importResult is the lab's import of one large file against raw COPY
// (medians over the repetitions).
type importResult struct {
	fileBytes, samples int64 // the large file, and the samples of both files
	copyWall, wall     time.Duration
	// copyCPU is the Postgres CPU of the raw COPY; cpu that of the import,
	// reach's and Postgres's (0: Postgres on another machine).
	copyCPU, cpu time.Duration
	rss          int64
}

// vsCopy is the import's speed as a share of COPY's (wall times).
func (r importResult) vsCopy() float64 { return r.copyWall.Seconds() / r.wall.Seconds() }

// perCore is the same from CPU time: the import's speed against COPY's
// with one core each (0 when the CPU was not measured).
func (r importResult) perCore() float64 {
	if r.copyCPU <= 0 || r.cpu <= 0 {
		return 0
	}
	return r.copyCPU.Seconds() / r.cpu.Seconds()
}

// labResults is what the lab run measured, for the summary.
type labResults struct {
	samples  int64 // with texts, when the pages ran
	clients  int
	pageSet  []string // the names of the page set's pages (-only may load fewer)
	bigLabel string
	big      []pageResult  // the biggest comparison's pages
	small    []pageResult  // the small comparison's, next to it
	imp      *importResult // nil: not run
	phases   []loadPhase
}

type goalStatus int

const (
	notMeasured goalStatus = iota
	goalMet
	goalNotMet
)

func (s goalStatus) String() string {
	return [...]string{"not measured", "met", "NOT met"}[s]
}

// goalResult is one goal with the figure measured for it; note says how
// the run's conditions differ from the goal's (a smaller scale, fewer
// clients or pages).
type goalResult struct {
	goal, measured, note string
	status               goalStatus
}

// isTextSearch is whether page name is a search in completion texts.
func isTextSearch(name string) bool { return strings.Contains(name, "texts") }

// worstPage is the goal "p95 < pageGoal" over pages.
func worstPage(goal string, pages []pageResult, want int, notes []string) goalResult {
	g := goalResult{goal: goal}
	if len(pages) == 0 {
		return g
	}
	worst, cold, over := pages[0], pages[0], 0
	for _, p := range pages {
		if p.p95 > worst.p95 {
			worst = p
		}
		if p.coldP95 > cold.coldP95 {
			cold = p
		}
		if p.p95 >= pageGoal {
			over++
		}
	}
	g.status = goalMet
	if over > 0 {
		g.status = goalNotMet
	}
	g.measured = fmt.Sprintf("worst %s p95 %s (1 client %s); %d of %d over", worst.name, fmtDur(worst.p95), fmtDur(worst.aloneP95), over, len(pages))
	if cold.coldP95 > 0 {
		// The goal is the steady state; the cold start is said beside it.
		g.measured += fmt.Sprintf("; from a cold pool (the warm-up) up to %s p95 (%s)", fmtDur(cold.coldP95), cold.name)
	}
	if len(pages) < want {
		notes = append(notes, fmt.Sprintf("%d of %d pages", len(pages), want))
	}
	g.note = strings.Join(notes, "; ")
	return g
}

// evaluateGoals compares r with issue 28's goals.
func evaluateGoals(r labResults) []goalResult {
	var scaleNotes []string
	if r.samples < labSamplesGoal {
		scaleNotes = append(scaleNotes, fmt.Sprintf("at %d samples, not 10 M", r.samples))
	}
	if r.clients != goalClients {
		scaleNotes = append(scaleNotes, fmt.Sprintf("%d clients, not %d", r.clients, goalClients))
	}
	stored := goalResult{goal: "10 M samples stored with texts", measured: fmt.Sprintf("%d", r.samples), status: goalNotMet}
	if r.samples >= labSamplesGoal {
		stored.status = goalMet
	}
	textSet := 0
	for _, n := range r.pageSet {
		if isTextSearch(n) {
			textSet++
		}
	}
	var texts []pageResult
	loaded := 0
	for _, ps := range [][]pageResult{r.big, r.small} {
		if len(ps) > 0 {
			loaded++
		}
		for _, p := range ps {
			if isTextSearch(p.name) {
				texts = append(texts, p)
			}
		}
	}
	out := []goalResult{
		stored,
		worstPage("every page p95 < 100 ms at 20 clients, biggest comparison ("+r.bigLabel+")", r.big, len(r.pageSet), scaleNotes),
		worstPage("every page p95 < 100 ms at 20 clients, small comparison next to it", r.small, len(r.pageSet), scaleNotes),
		worstPage("text search p95 < 100 ms (both comparisons)", texts, loaded*textSet, scaleNotes),
	}
	imp, rss := goalResult{goal: "import ≥ 100 % of raw COPY's speed, one 1.5 GB file"}, goalResult{goal: "import peak RSS < 500 MB"}
	if r.imp != nil {
		i := *r.imp
		imp.status = goalNotMet
		if i.vsCopy() >= importGoal {
			imp.status = goalMet
		}
		if i.rss > 0 { // 0: not a child process of this one
			rss.status = goalNotMet
			if i.rss < rssGoal {
				rss.status = goalMet
			}
		}
		imp.measured = fmt.Sprintf("%.0f %% (COPY %.1fs, import %.1fs)", 100*i.vsCopy(), i.copyWall.Seconds(), i.wall.Seconds())
		if pc := i.perCore(); pc > 0 {
			imp.measured += fmt.Sprintf("; per core %.0f %%", 100*pc)
		}
		rss.measured = mb(i.rss)
		if i.fileBytes < importFileGB {
			imp.note = fmt.Sprintf("a file of %s, not 1.5 GB", mb(i.fileBytes))
			rss.note = imp.note
		}
	}
	return append(out, imp, rss)
}

// printSummary prints the goals and the load average of each phase.
func printSummary(w io.Writer, r labResults) {
	fmt.Fprintf(w, "\nissue 28's goals against this run\n")
	for _, g := range evaluateGoals(r) {
		fmt.Fprintf(w, "  %-12s %s: %s", g.status, g.goal, g.measured)
		if g.note != "" {
			fmt.Fprintf(w, " (%s)", g.note)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "load average (1 minute) per phase, sampled every %v: start → end, min–max\n", loadEvery)
	for _, p := range r.phases {
		fmt.Fprintf(w, "  %-34s %5.2f → %5.2f, %5.2f–%5.2f  (%.0fs)\n", p.name, p.start, p.end, p.min, p.max, p.took.Seconds())
	}
}

func fmtDur(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
	return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000)
}

// loadPhase is the machine's 1-minute load average over one phase.
type loadPhase struct {
	name                 string
	start, end, min, max float64
	took                 time.Duration
}

// loadEvery is how often a phase samples the load average.
const loadEvery = 2 * time.Second

// phaseWatch samples /proc/loadavg while a phase runs.
type phaseWatch struct {
	quit chan struct{}
	done chan loadPhase
}

func startPhase(name string) *phaseWatch {
	w := &phaseWatch{quit: make(chan struct{}), done: make(chan loadPhase, 1)}
	l := load1()
	p, t0 := loadPhase{name: name, start: l, min: l, max: l}, time.Now()
	go func() {
		t := time.NewTicker(loadEvery)
		defer t.Stop()
		for {
			select {
			case <-w.quit:
				p.end = load1()
				p.min, p.max = min(p.min, p.end), max(p.max, p.end)
				p.took = time.Since(t0)
				w.done <- p
				return
			case <-t.C:
				l := load1()
				p.min, p.max = min(p.min, l), max(p.max, l)
			}
		}
	}()
	return w
}

// stop ends the phase and returns its load averages.
func (w *phaseWatch) stop() loadPhase {
	close(w.quit)
	return <-w.done
}

// load1 is the 1-minute load average (0 when unknown).
func load1() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
