package web_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/internal/intake"
	"github.com/reach-lab/reach/internal/testfiles"
)

// The training view: the GSM8K PPO checkpoints' flows chart, a click on a
// bar of lost problems goes to that checkpoint's list, a problem of the
// list opens with its c/n at every step, and the sharpening tax is shown.
func TestBrowserTrainingFlows(t *testing.T) { testBrowserTrainingFlows(t) }

// TestBrowserTrainingFlowsUnlicensed is TestBrowserTrainingFlows on the
// real GSM8K PPO checkpoints where the unlicensed folder is present.
func TestBrowserTrainingFlowsUnlicensed(t *testing.T) {
	testfiles.Unlicensed(t, testfiles.GSM8KFolder) // skips here, in one line, where the unlicensed folder is absent
	testBrowserTrainingFlows(t)
}

func testBrowserTrainingFlows(t *testing.T) {
	a := startApp(t)
	b := newBrowser(t, 120*time.Second)
	b.signIn(t, a)
	dir := testfiles.GSM8KProbe(t)
	spec := intake.Spec{Name: "gsm8k ppo run", AcceptGuess: true, Dataset: intake.LocalFile(filepath.Join(dir, "data/gsm8k_subset.jsonl")),
		Models: []intake.Model{{Name: "SFT", Role: "base", File: intake.LocalFile(filepath.Join(dir, "results_2048_batched/sft_raw.jsonl"))}}}
	for _, s := range testfiles.StandInSteps {
		step := s.Step
		spec.Models = append(spec.Models, intake.Model{Name: fmt.Sprintf("ppo step %d", step), Role: "checkpoint", Step: &step,
			File: intake.LocalFile(filepath.Join(dir, fmt.Sprintf("trajectory/step-%d/rl_raw.jsonl", step)))})
	}
	id, _, err := intake.Create(context.Background(), a.st, a.client, spec)
	if err != nil {
		t.Fatal(err)
	}
	a.waitReady(t, id, 90*time.Second)
	rep, err := analysis.Build(context.Background(), a.st, id)
	if err != nil {
		t.Fatal(err)
	}
	// The first checkpoint with a flow, the bar to click and the value at its middle
	// (lost below zero; regained stacked on the newly solved).
	at, step, kind, series, y, listed := -1, 0, "", 0, 0.0, []string(nil)
	for i, tp := range rep.Trajectory[1:] {
		fresh := len(tp.Gained) - len(tp.Regained)
		switch {
		case len(tp.Lost) > 0:
			at, step, kind, series, y, listed = i, tp.Step, "lost", 2, -float64(len(tp.Lost))/2, tp.Lost
		case fresh > 0:
			at, step, kind, series, y, listed = i, tp.Step, "gained", 0, float64(fresh)/2, tp.Gained
		case len(tp.Regained) > 0:
			at, step, kind, series, y, listed = i, tp.Step, "gained", 1, float64(fresh)+float64(len(tp.Regained))/2, tp.Gained
		}
		if at >= 0 {
			break
		}
	}
	if at < 0 {
		t.Fatal("no checkpoint gained or lost a problem: nothing to click")
	}
	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, id))
	b.waitReport(t)
	b.waitFor(t, "the flows chart", `document.querySelector("#flows [id^=flows_]") && echarts.getInstanceByDom(document.querySelector("#flows [id^=flows_]")) ? "ok" : ""`, 20*time.Second)
	if got := eval[string](t, b, `document.querySelector("#sharpening-tax table tbody tr td.num").textContent.trim()`); got == "" {
		t.Error("sharpening tax table empty")
	}
	// The two-stage reading names its label, one the report gives.
	if got := eval[string](t, b, `(document.querySelector("#dynamics") || {dataset: {}}).dataset.label || ""`); rep.Dynamics == nil || got == "" {
		t.Errorf("two-stage view %q (report %+v)", got, rep.Dynamics)
	}
	// The trajectory at a chosen k: a reading per k of the report, and pass@k between 1 and
	// k max drawn off at first, on in one legend click.
	// (The labels may have moved from "pending" since rep was built: the statistics job.)
	labels := eval[[]string](t, b, `Array.from(document.querySelectorAll("#dynamics-at-k tbody tr")).map(r => r.dataset.k + (r.dataset.label ? "" : " unlabelled"))`)
	var readings []string
	for _, d := range rep.DynamicsAtK {
		readings = append(readings, fmt.Sprint(d.K))
	}
	if strings.Join(labels, ", ") != strings.Join(readings, ", ") || len(readings) < 2 {
		t.Errorf("two-stage readings per k on the page %v; the report's ks %v", labels, readings)
	}
	shown := eval[bool](t, b, `(() => {
		const inst = echarts.getInstanceByDom(document.querySelector("#trajectory [id^=trajectory_]"));
		const off = inst.getOption().legend[0].selected["pass@2"] === false;
		inst.dispatchAction({type: "legendSelect", name: "pass@2"});
		return off && inst.getOption().legend[0].selected["pass@2"] === true;
	})()`)
	if !shown {
		t.Error("pass@2 is not drawn off at first and on after a legend click")
	}
	// Click the middle of the bar.
	b.do(t, "scroll to the flows chart", chromedp.ScrollIntoView(chromedp.CSS("#flows")))
	xy := eval[[]float64](t, b, fmt.Sprintf(`(() => {
		const el = document.querySelector("#flows [id^=flows_]");
		const c = echarts.getInstanceByDom(el);
		const p = c.convertToPixel({seriesIndex: %d}, [%d, %f]);
		const r = el.getBoundingClientRect();
		return [r.left + p[0], r.top + p[1]];
	})()`, series, at, y))
	b.do(t, "click the "+kind+" bar", chromedp.MouseClickXY(xy[0], xy[1]))
	want := fmt.Sprintf("#flow-%d-%s", step, kind)
	b.waitFor(t, "the lost list's anchor", fmt.Sprintf(`location.hash === %q ? "ok" : ""`, want), 10*time.Second)
	n := eval[int](t, b, fmt.Sprintf(`document.querySelectorAll(%q).length`, want+" a.flow-problem"))
	if n != len(listed) {
		t.Errorf("the list at %s links %d problems; the report lists %d (%v)", want, n, len(listed), listed)
	}
	b.clickAndWait(t, want+" a.flow-problem", problemPath)
	rows := eval[[]string](t, b, `Array.from(document.querySelectorAll("#step-history tbody tr")).map(r => r.dataset.step + " " + r.cells[2].textContent.trim())`)
	if len(rows) != 1+len(testfiles.StandInSteps) {
		t.Fatalf("step history %v; want the base model and %d checkpoints", rows, len(testfiles.StandInSteps))
	}
	here := eval[string](t, b, fmt.Sprintf(`document.querySelector('#step-history tr[data-step="%d"]').textContent`, step))
	if !strings.Contains(here, kind) {
		t.Errorf("step %d row %q does not say %s", step, here, kind)
	}
	b.checkConsole(t)
}
