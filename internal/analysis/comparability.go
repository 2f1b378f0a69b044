package analysis

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/reach-lab/reach/internal/comparability"
	"github.com/reach-lab/reach/internal/store"
)

// runSettings gathers what Reach knows of how a run was sampled and graded, under the names
// comparability reads: a sampled run's settings from the comparison's sampling config (the
// JSON of jobs.SamplingConfig) with the run's template override, an imported run's from what
// its file recorded (ingest.RunMeta.Settings); the grader and n from the run and its counts.
func runSettings(c store.Comparison, r store.Run, m ModelReport, adaptive bool) map[string]string {
	out := map[string]string{}
	if r.Endpoint.BaseURL != "" {
		var cfg map[string]any
		if json.Unmarshal(c.Sampling, &cfg) == nil {
			var o map[string]any
			if len(r.SamplingOverride) > 0 && json.Unmarshal(r.SamplingOverride, &o) == nil {
				maps.Copy(cfg, o)
			}
			for _, k := range []string{"temperature", "top_p", "top_k", "min_p", "max_tokens", "stop"} {
				if v, ok := cfg[k]; ok {
					b, _ := json.Marshal(v)
					out[k] = string(b)
				}
			}
			// Unset top-k and min-p are 0 in the config: the server's default.
			for _, k := range []string{"top_k", "min_p"} {
				if out[k] == "0" {
					out[k] = "unset"
				}
			}
			if t, _ := cfg["template"].(string); t != "" {
				if text, _ := cfg["template_text"].(string); t == "custom" && text != "" {
					sum := sha256.Sum256([]byte(text))
					t = "custom (sha256 " + hex.EncodeToString(sum[:4]) + ")"
				}
				out["template"] = t
			}
		}
		style := r.Endpoint.Style
		if style == "" {
			style = "completions"
		}
		out["api_style"] = style
	} else if m.Source != nil && m.Source.Tool != nil {
		maps.Copy(out, m.Source.Tool.Settings)
	}
	grader := "the file's verdicts"
	if p := gradingPolicy(r, c.GradingPolicy); p != "file" {
		grader = "Reach's verifier (" + p + ")"
	}
	if r.CodeHarness != "" {
		grader += ", harness " + r.CodeHarness
	}
	out["grader"] = grader
	if !adaptive { // an adaptive design gives each problem its own n on purpose
		if m.N == m.NMax {
			out["n"] = fmt.Sprint(m.N)
		} else {
			out["n"] = fmt.Sprintf("%d to %d", m.N, m.NMax)
		}
	}
	return out
}

// comparabilityOf checks the report's models against each other (comparability.Check).
func comparabilityOf(c store.Comparison, rep *Report, cfg sampledConfig) *comparability.Result {
	if len(rep.Models) < 2 {
		return nil
	}
	on := cfg.Adaptive
	ms := make([]comparability.Model, len(rep.Models))
	for i, r := range c.Runs {
		if i >= len(rep.Models) {
			break
		}
		ms[i] = comparability.Model{Name: rep.Models[i].Name, Settings: runSettings(c, r, rep.Models[i], on)}
	}
	res := comparability.Check(ms)
	return &res
}

// checkComparability warns when the models were sampled or graded
// differently in a setting that changes pass@k, naming each difference, and
// says which settings only some models recorded (those could not be
// compared: "unknown" for the others).
func checkComparability(rep *Report) []Warning {
	cp := rep.Comparability
	if cp == nil {
		return nil
	}
	var parts, partial []string
	var out []Warning
	for _, d := range cp.Differences {
		if d.Key == "temperature" && cp.TemperatureSweep {
			// A deliberate sweep: the figures per temperature are in their own section.
			out = append(out, Warning{Code: "temperature-sweep", Severity: SeverityInfo, Figures: []string{FigurePassK, FigureCrossover},
				Text: fmt.Sprintf("Temperature sweep: %s. The pass@k curves, solved sets, union across temperatures and k* per temperature are in the temperature sweep section.", d.Text())})
			continue
		}
		// A different n has warnings of its own (unequal budgets, k max cut)
		// that say what it does to each figure.
		if d.Key != "n" {
			parts = append(parts, d.Text())
		}
	}
	for _, d := range cp.Partial {
		if d.Key != "n" {
			partial = append(partial, d.Text())
		}
	}
	switch {
	case len(parts) > 0:
		text := fmt.Sprintf("The models were not sampled or graded alike: %s. A difference in pass@k or k* may be the settings', not the training's.",
			strings.Join(parts, "; "))
		if len(partial) > 0 {
			text += fmt.Sprintf(" Not compared (recorded for some models only): %s.", strings.Join(partial, "; "))
		}
		return append([]Warning{{Code: "settings-differ", Severity: SeverityWarning, Figures: []string{FigurePassK, FigureCrossover, FigureSolved}, Text: text}}, out...)
	case len(partial) > 0:
		return append(out, Warning{Code: "settings-unknown", Severity: SeverityInfo, Figures: []string{FigurePassK, FigureCrossover, FigureSolved},
			Text: fmt.Sprintf("Some settings were recorded for some models only, so Reach cannot tell whether the models were sampled alike in them: %s.",
				strings.Join(partial, "; "))})
	}
	return out
}
