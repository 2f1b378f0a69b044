package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/intake"
)

// One RL model imported at two temperatures (the Inspect logs of the tool-formats case, the
// base log relabelled as the RL model at 1.0): the comparison page shows the temperature sweep
// section with pass@k and solved sets per temperature, the union, k* per temperature and both
// charts; the settings panel calls it a sweep, not a mismatch; G-Pass@k shows intervals
// (issue 25.3 and 25.4).
func TestBrowserTemperatureSweep(t *testing.T) {
	formats := filepath.Join("..", "internal", "testfiles", "cases", "tool-formats")
	tmp := t.TempDir()
	edit := func(role, name, model string, temp float64) string {
		matches, _ := filepath.Glob(filepath.Join(formats, "c_inspect_"+role+"_*.json"))
		if len(matches) != 1 {
			t.Fatalf("inspect %s log: %v", role, matches)
		}
		raw, err := os.ReadFile(matches[0])
		if err != nil {
			t.Fatal(err)
		}
		var log map[string]any
		if err := json.Unmarshal(raw, &log); err != nil {
			t.Fatal(err)
		}
		ev := log["eval"].(map[string]any)
		ev["model_generate_config"] = map[string]any{"temperature": temp}
		if model != "" {
			ev["model"] = model
		}
		out, _ := json.Marshal(log)
		p := filepath.Join(tmp, name+".json")
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := startApp(t)
	b := newBrowser(t, 90*time.Second)
	b.signIn(t, a)
	id, _, err := intake.Create(context.Background(), a.st, a.client, intake.Spec{Name: "sweep",
		Dataset: intake.LocalFile(filepath.Join(formats, "ds_gsm8k_3.jsonl")),
		Models: []intake.Model{
			{Name: "base", File: intake.LocalFile(edit("base", "b", "", 0.6))},
			{Name: "rl@T=0.6", File: intake.LocalFile(edit("rl", "r06", "", 0.6))},
			{Name: "rl@T=1.0", File: intake.LocalFile(edit("base", "r10", "vllm/Qwen/Qwen2.5-7B-SimpleRL-Zoo", 1.0))},
		}})
	if err != nil {
		t.Fatal(err)
	}
	a.waitReady(t, id, time.Minute)
	b.open(t, fmt.Sprintf("%s/comparisons/%d", a.url, id))
	b.waitReport(t)
	text := func(sel string) []string {
		t.Helper()
		return eval[[]string](t, b, `Array.from(document.querySelectorAll(`+fmt.Sprintf("%q", sel)+`)).map(r => r.innerText.replace(/\s+/g, " ").trim())`)
	}
	if n := eval[int](t, b, `document.querySelectorAll("#temperature-sweep").length`); n != 1 {
		t.Fatalf("%d temperature sweep sections", n)
	}
	// pass@1 8/12 and 6/12, pass@4 2/3 and 1; solved 2 and 3 of 3, one problem only at 1.0;
	// the union: pass@1 0.75, pass@4 1, 3 of 3.
	rows := strings.Join(text("#temperature-sweep table.sweep-temps tbody tr"), " | ")
	want := "0.6 rl@T=0.6 66.67% 66.67% 2 of 3 0 | 1.0 rl@T=1.0 50.00% 100.00% 3 of 3 1 | union any temperature 75.00%* 100.00%* 3 of 3"
	if rows != want {
		t.Errorf("per-temperature rows\n%q\nwant\n%q", rows, want)
	}
	if gain := strings.Join(text("#temperature-sweep .sweep-gain"), ""); !strings.Contains(gain, "against 3 at the best single one (T = 1.0): the union adds +0.0 points") {
		t.Errorf("union sentence %q", gain)
	}
	// k* of rl@T=0.6 against base at 0.6: 2^0.6 ≈ 1.5; rl@T=1.0 has the base model's counts.
	ks := text("#temperature-sweep table.sweep-crossovers tbody tr")
	if len(ks) != 2 || !strings.HasPrefix(ks[0], "base 0.6 rl@T=0.6 0.6 k* ≈ 1.5 [") || !strings.HasPrefix(ks[1], "base 0.6 rl@T=1.0 1.0 no crossover up to k = 4") {
		t.Errorf("k* rows %q", ks)
	}
	if n := eval[int](t, b, `document.querySelectorAll("#temperature-sweep .chart canvas, #temperature-sweep .chart svg").length`); n < 2 {
		t.Errorf("%d charts drawn in the sweep section; want the curves and k* against temperature", n)
	}
	if s := eval[string](t, b, `document.querySelector("#comparability summary").innerText`); !strings.HasPrefix(s, "Temperature sweep") {
		t.Errorf("settings panel summary %q", s)
	}
	if n := eval[int](t, b, `document.querySelectorAll("#comparability tr.sweep, #comparability tr.differs").length`); n != 1 ||
		eval[int](t, b, `document.querySelectorAll("#comparability tr.sweep").length`) != 1 {
		t.Error("the temperature row is not marked as the sweep")
	}
	if body := eval[string](t, b, `document.body.innerText`); strings.Contains(body, "not sampled or graded alike") {
		t.Error("a deliberate sweep is warned about as a mismatch")
	}
	// G-Pass@k: every figure with its interval, and the chart.
	if n := eval[int](t, b, `document.querySelectorAll("#g-pass tbody td.num .ci").length`); n == 0 {
		t.Error("no G-Pass@k intervals")
	}
	if n := eval[int](t, b, `document.querySelectorAll("#g-pass .chart canvas, #g-pass .chart svg").length`); n == 0 {
		t.Error("no G-Pass@k chart")
	}
	// The report JSON carries the sweep and validates against the OpenAPI document.
	admin := newAccount(t, a.st, a.url, "sweep-spec@reach.test", true, "")
	var rep struct {
		Sweep *struct {
			Models     []json.RawMessage `json:"models"`
			Crossovers []json.RawMessage `json:"crossovers"`
		} `json:"temperature_sweep"`
	}
	if err := json.Unmarshal(newSpecClient(t, a.url, admin.Token).get(fmt.Sprintf("/comparisons/%d/report", id), 200), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Sweep == nil || len(rep.Sweep.Models) != 1 || len(rep.Sweep.Crossovers) != 2 {
		t.Errorf("report JSON temperature_sweep %+v", rep.Sweep)
	}
	b.settle(t)
	b.checkFits(t, "temperature sweep page")
	b.checkChartTexts(t, "temperature sweep page")
	b.screenshotOf(t, "#temperature-sweep", "temperature-sweep")
	b.screenshotOf(t, "#temperature-sweep h3 + div.chart", "temperature-sweep-kstar")
	b.screenshotOf(t, "#g-pass", "g-pass")
	b.checkConsole(t)
}
