package analysis

import (
	"strconv"

	"github.com/reach-lab/reach/internal/comparability"
	"github.com/reach-lab/reach/internal/passk"
	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/tempsweep"
)

// sweepDraws and sweepSeed fix the bootstrap of k* per temperature, so a
// report rebuilt from the same counts has the same intervals.
const (
	sweepDraws = 1000
	sweepSeed  = DefaultSeed
)

// runIdentity names the model a run sampled, for telling which runs are one
// model at several temperatures: a sampled run's endpoint (URL and served
// model name), an imported run's model as its tool recorded it, else the
// run's name without a trailing "@T=…".
func runIdentity(r store.Run, m ModelReport) string {
	if r.Endpoint.BaseURL != "" {
		return "endpoint " + r.Endpoint.BaseURL + " " + r.Endpoint.Model
	}
	if m.Source != nil && m.Source.Tool != nil && m.Source.Tool.Model != "" {
		return "tool " + m.Source.Tool.Model
	}
	return "name " + tempsweep.Stem(r.ModelName)
}

// temperatureSweep fills rep.TemperatureSweep when some model of the
// comparison was sampled at several temperatures (tempsweep.Groups): runs
// with the same role and identity (runIdentity) whose temperatures differ,
// each the recorded one or, when its source recorded none, the one its name
// gives after "@T=". settings[i] is run i's recorded settings (runSettings).
func (rep *Report) temperatureSweep(c store.Comparison, models [][]passk.Count, kept []store.Problem, settings []map[string]string) error {
	runs := make([]tempsweep.Run, len(rep.Models))
	for i := range rep.Models {
		r := c.Runs[i]
		runs[i] = tempsweep.Run{Name: rep.Models[i].Name, Role: rep.Models[i].Role, Identity: runIdentity(r, rep.Models[i]), Counts: models[i]}
		if v, ok := comparability.Recorded("temperature", settings[i]); ok {
			if t, err := strconv.ParseFloat(v, 64); err == nil {
				runs[i].Temperature, runs[i].HasTemp = t, true
			}
		} else if t, ok := tempsweep.NameTemperature(r.ModelName); ok {
			// Nothing recorded (a plain samples file): the name's "@T=…".
			runs[i].Temperature, runs[i].HasTemp = t, true
		}
	}
	keys := make([]string, len(kept))
	for j, p := range kept {
		keys[j] = p.Key
	}
	sw, err := tempsweep.Compute(runs, keys, tempsweep.Options{ChartKs: ChartKs, Draws: sweepDraws, Seed: sweepSeed})
	if err != nil {
		return err
	}
	rep.TemperatureSweep = sw
	if sw != nil && rep.Comparability != nil {
		rep.Comparability.TemperatureSweep = true
	}
	return nil
}
