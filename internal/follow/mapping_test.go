package follow

import (
	"encoding/json"
	"testing"

	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/store"
)

// A followed step takes the mapping the latest earlier checkpoint of its
// model was read with, when that file needed one; never another model's,
// nor one of a file Reach recognised.
func TestEarlierMapping(t *testing.T) {
	enc := func(m ingest.Mapping) json.RawMessage {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	step := func(n int) *int { return &n }
	mapped := string(ingest.FormatMapped)
	c := &store.Comparison{Runs: []store.Run{
		{ModelName: "base"},
		{ModelName: "ppo step 100", Step: step(100), Format: mapped, Mapping: enc(ingest.Mapping{ProblemID: "qid", Completion: "old"})},
		{ModelName: "ppo step 300", Step: step(300), Format: mapped, Mapping: enc(ingest.Mapping{ProblemID: "qid", Completion: "text"})},
		{ModelName: "ppo step 200", Step: step(200), Format: mapped, Mapping: enc(ingest.Mapping{ProblemID: "qid", Completion: "mid"})},
		{ModelName: "grpo step 900", Step: step(900), Format: mapped, Mapping: enc(ingest.Mapping{ProblemID: "other"})},
		{ModelName: "dpo step 10", Step: step(10), Format: "verl"},
	}}
	if m := earlierMapping(c, "ppo"); m == nil || m.ProblemID != "qid" || m.Completion != "text" {
		t.Errorf("ppo: %+v; want step 300's mapping", m)
	}
	if m := earlierMapping(c, "grpo"); m == nil || m.ProblemID != "other" {
		t.Errorf("grpo: %+v", m)
	}
	// A folder of one step imported as the model itself (no step).
	c.Runs = append(c.Runs, store.Run{ModelName: "rloo", Format: mapped, Mapping: enc(ingest.Mapping{ProblemID: "single"})})
	if m := earlierMapping(c, "rloo"); m == nil || m.ProblemID != "single" {
		t.Errorf("rloo, one step imported as the model: %+v", m)
	}
	c.Runs = append(c.Runs, store.Run{ModelName: "rloo step 5", Step: step(5), Format: mapped, Mapping: enc(ingest.Mapping{ProblemID: "stepped"})})
	if m := earlierMapping(c, "rloo"); m == nil || m.ProblemID != "stepped" {
		t.Errorf("rloo with a step: %+v; want the step's", m)
	}
	for _, model := range []string{"dpo", "sft", "pp"} {
		if m := earlierMapping(c, model); m != nil {
			t.Errorf("%s: %+v; want none", model, m)
		}
	}
}
