// Package comparability checks whether the models of a comparison were sampled and graded
// alike: the settings that change pass@k (temperature, top-p, top-k, min-p, the token budget,
// the prompt template and system prompt, stop sequences, the API style, the dataset, the grader,
// n) are read from what each model's source recorded, put under one name each (a tool's
// max_gen_toks and another's max_new_tokens are both the token budget), compared, and every
// difference is named with each model's value, "unknown" where a source did not record it.
//
// Why it matters: a base-vs-RL crossover read off two models sampled at different temperatures
// or with different prompts measures the settings as much as the training (arXiv 2510.02611: a
// union over temperatures adds 7.3 points of pass@k and lets base models match RL).
//
// Everything here is pure.
package comparability

import (
	"slices"
	"strconv"
	"strings"
)

// Setting is one setting that changes pass@k.
type Setting struct {
	Key   string // stable name in JSON
	Label string // words for the page
	// aliases are the names tools write it under (lower case; a dotted path matches on its
	// last part too: generation_kwargs.temperature is temperature).
	aliases  []string
	numeric  bool
	sampling bool // a setting of how samples are drawn (not the grader, the dataset or n)
}

// Settings are the settings checked, in the order the page lists them.
var Settings = []Setting{
	{Key: "temperature", sampling: true, Label: "temperature", aliases: []string{"temperature", "temp"}, numeric: true},
	{Key: "top_p", sampling: true, Label: "top-p", aliases: []string{"top_p", "top-p", "topp"}, numeric: true},
	{Key: "top_k", sampling: true, Label: "top-k", aliases: []string{"top_k", "top-k", "topk"}, numeric: true},
	{Key: "min_p", sampling: true, Label: "min-p", aliases: []string{"min_p", "min-p"}, numeric: true},
	{Key: "max_tokens", sampling: true, Label: "token budget (max new tokens)",
		aliases: []string{"max_tokens", "max_new_tokens", "max_gen_toks", "max_completion_tokens", "max_output_tokens", "max_generation_tokens"}, numeric: true},
	{Key: "template", sampling: true, Label: "prompt template", aliases: []string{"template", "prompt_template", "prompt_type", "chat_template", "template_text"}},
	{Key: "system_prompt", sampling: true, Label: "system prompt", aliases: []string{"system_prompt", "system_message", "system"}},
	{Key: "stop", sampling: true, Label: "stop sequences", aliases: []string{"stop", "until", "stop_sequences"}},
	{Key: "api_style", Label: "API style", aliases: []string{"api_style"}},
	{Key: "dataset", Label: "dataset", aliases: []string{"dataset hash", "dataset_hash"}},
	{Key: "grader", Label: "grader", aliases: []string{"grader"}},
	{Key: "n", Label: "samples per problem (n)", aliases: []string{"n"}},
}

// Model is one model's recorded settings under any names its source used (nil or a missing
// key: not recorded).
type Model struct {
	Name     string
	Settings map[string]string
}

// Value is one model's value of a setting; Known is false when its source did not record it.
type Value struct {
	Model string `json:"model"`
	Value string `json:"value"`
	Known bool   `json:"known"`
}

// Difference is a setting whose recorded values differ between models (two known values that
// are not equal), with every model's value.
type Difference struct {
	Key    string  `json:"setting"`
	Label  string  `json:"label"`
	Values []Value `json:"values"`
}

// Result is the check's answer.
type Result struct {
	// Alike: no setting was recorded with different values. Settings recorded for some models
	// only (Partial) do not make models unlike, but the page says they could not be compared.
	Alike       bool         `json:"alike"`
	Differences []Difference `json:"differences"`
	// Same lists the settings every model recorded with one value (labels).
	Same []string `json:"same"`
	// Partial lists the settings some models recorded and others did not, with the values.
	Partial []Difference `json:"partial"`
	// Unknown lists the settings no model recorded (labels).
	Unknown []string `json:"unknown"`
	// SamplingKnown: some setting of how the samples were drawn (temperature, top-p, top-k,
	// min-p, token budget, template, system prompt, stop) was recorded for every model. Without
	// it "alike" rests on the grader and n alone and the page says it cannot tell.
	SamplingKnown bool `json:"sampling_known"`
	// TemperatureSweep: some model was sampled at several temperatures on purpose (set by the
	// caller, see internal/tempsweep); a temperature difference is then the sweep, not a
	// mismatch.
	TemperatureSweep bool `json:"temperature_sweep,omitempty"`
}

// lookup finds setting s in a model's recorded settings: aliases in their order, keys in sorted
// order, so that a source recording two names for one setting always gives the same answer.
func lookup(s Setting, m map[string]string) (string, bool) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, alias := range s.aliases {
		for _, key := range keys {
			k := strings.ToLower(strings.TrimSpace(key))
			last := k
			if i := strings.LastIndexByte(k, '.'); i >= 0 {
				last = k[i+1:]
			}
			if k != alias && last != alias {
				continue
			}
			if v := normalize(s, m[key]); v != "" {
				return v, true
			}
		}
	}
	return "", false
}

// normalize makes equal settings compare equal: numbers by value ("0.60" = "0.6" = "6e-1"),
// JSON strings without their quotes, lists without spaces.
func normalize(s Setting, v string) string {
	v = strings.TrimSpace(v)
	if u, err := strconv.Unquote(v); err == nil && strings.HasPrefix(v, `"`) {
		v = u
	}
	if v == "null" || v == "None" {
		return ""
	}
	if s.numeric {
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	if strings.HasPrefix(v, "[") {
		v = strings.Join(strings.Fields(v), "")
	}
	return v
}

// Check compares the models' settings. With fewer than two models everything is alike.
func Check(models []Model) Result {
	r := Result{Alike: true, Differences: []Difference{}, Same: []string{}, Partial: []Difference{}, Unknown: []string{}}
	for _, s := range Settings {
		vals := make([]Value, len(models))
		known, distinct := 0, map[string]bool{}
		for i, m := range models {
			v, ok := lookup(s, m.Settings)
			vals[i] = Value{Model: m.Name, Value: v, Known: ok}
			if !ok {
				vals[i].Value = "unknown"
				continue
			}
			known++
			distinct[v] = true
		}
		d := Difference{Key: s.Key, Label: s.Label, Values: vals}
		switch {
		case known == 0:
			r.Unknown = append(r.Unknown, s.Label)
		case len(distinct) > 1:
			r.Differences = append(r.Differences, d)
			r.Alike = false
		case known < len(models):
			r.Partial = append(r.Partial, d)
		default:
			r.Same = append(r.Same, s.Label)
			if s.sampling {
				r.SamplingKnown = true
			}
		}
	}
	return r
}

// Text words a difference: "temperature: base 0.6, RL 1.0".
func (d Difference) Text() string {
	parts := make([]string, len(d.Values))
	for i, v := range d.Values {
		parts[i] = v.Model + " " + clip(v.Value, 80)
	}
	return d.Label + ": " + strings.Join(parts, ", ")
}

func clip(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// Recorded is the value a model's settings record for the setting named key (a Settings Key,
// e.g. "temperature"), normalized as Check compares it ("0.60" → "0.6"); false when the
// settings do not record it or key is not a setting.
func Recorded(key string, settings map[string]string) (string, bool) {
	for _, s := range Settings {
		if s.Key == key {
			return lookup(s, settings)
		}
	}
	return "", false
}
