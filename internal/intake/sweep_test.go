package intake

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
)

func TestParseTemperaturesAndSweepModels(t *testing.T) {
	got, err := ParseTemperatures(" 0.6, 1.0,1.2 ")
	if err != nil || !slices.Equal(got, []float64{0.6, 1, 1.2}) {
		t.Fatalf("ParseTemperatures = %v, %v", got, err)
	}
	if got, err := ParseTemperatures(""); got != nil || err != nil {
		t.Errorf("empty: %v, %v", got, err)
	}
	for _, bad := range []string{"0.6", "0.6, x", "0.6, -1", "1, 1.0", "NaN, 1"} {
		if _, err := ParseTemperatures(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	for in, want := range map[float64]string{1: "rl@T=1.0", 0.6: "rl@T=0.6", 1.25: "rl@T=1.25", 0: "rl@T=0.0"} {
		if got := SweepName("rl", in); got != want {
			t.Errorf("SweepName(rl, %v) = %q, want %q", in, got, want)
		}
	}
	ms, err := SweepModels([]EndpointModel{{Name: "base"}, {Name: "rl", Template: "chat"}}, []float64{0.6, 1})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name+"/"+m.Role)
	}
	// Temperature by temperature: the first two runs are base and RL (the headline pair).
	if !slices.Equal(names, []string{"base@T=0.6/base", "rl@T=0.6/rl", "base@T=1.0/base", "rl@T=1.0/rl"}) || *ms[2].Temperature != 1 || *ms[1].Temperature != 0.6 || ms[3].Template != "chat" {
		t.Errorf("swept models %v", names)
	}
	for _, bad := range []float64{-1, 1e9, 10.5} {
		if _, err := SweepModels([]EndpointModel{{Name: "rl"}}, []float64{bad}); err == nil {
			t.Errorf("temperature %v accepted", bad)
		}
	}
	// A run's temperature override is the temperature it samples at.
	o, _ := json.Marshal(jobs.ModelOverride{Temperature: ms[2].Temperature})
	cfg, err := jobs.DefaultSamplingConfig().ForRun(store.Run{ModelName: "base@T=1.0", SamplingOverride: o})
	if err != nil || cfg.Temperature != 1 || cfg.Params(1).Temperature != 1 {
		t.Errorf("ForRun: %+v, %v", cfg, err)
	}
}

func TestParseModelFlagSweepName(t *testing.T) {
	for in, want := range map[string][2]string{
		"rl@T=1.0=runs/rl.jsonl": {"rl@T=1.0", "runs/rl.jsonl"},
		"rl=a=b.jsonl":           {"rl", "a=b.jsonl"},
		"rl@T=x.jsonl":           {"rl@T", "x.jsonl"},
	} {
		name, path, err := ParseModelFlag(in)
		if err != nil || name != want[0] || path != want[1] {
			t.Errorf("ParseModelFlag(%q) = %q, %q, %v; want %q", in, name, path, err, want)
		}
	}
}
