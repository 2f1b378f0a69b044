package web

import (
	"bytes"
	"mime/multipart"
	"net/http/httptest"
	"strings"
	"testing"
)

// Issue 9 case 2: the setup form's seed becomes the sampling config's seed
// (the one `reach sample --seed` sets), from which each sample's seed is
// derived; a seed that is not a whole number is refused.
func TestSampleFormSeed(t *testing.T) {
	form := func(seed string) (*multipart.Writer, *bytes.Buffer) {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		for _, kv := range [][2]string{{"name", "seeded"}, {"dataset_id", "1"}, {"seed", seed}, {"template", "qwen-boxed"},
			{"model_role", "base"}, {"model_name", "base"}, {"model_url", "http://127.0.0.1:8000/v1"}, {"model_model", "b"},
			{"model_role", "rl"}, {"model_name", "rl"}, {"model_url", "http://127.0.0.1:8001/v1"}, {"model_model", "r"}} {
			w.WriteField(kv[0], kv[1])
		}
		w.Close()
		return w, &b
	}
	parse := func(seed string) (*int64, error) {
		w, b := form(seed)
		r := httptest.NewRequest("POST", "/comparisons/sample", b)
		r.Header.Set("Content-Type", w.FormDataContentType())
		spec, err := parseSampling(r)
		return spec.Config.Seed, err
	}
	if s, err := parse("20261130"); err != nil || s == nil || *s != 20261130 {
		t.Errorf("seed 20261130: config seed %v, %v", s, err)
	}
	if s, err := parse(""); err != nil || s != nil {
		t.Errorf("no seed: config seed %v, %v", s, err)
	}
	if _, err := parse("1.5"); err == nil || !strings.Contains(err.Error(), `seed "1.5" is not a whole number`) {
		t.Errorf("seed 1.5: %v", err)
	}
}

// Issue 25.4: the form's temperatures become the spec's sweep; one temperature, or one given
// twice, is refused with words.
func TestSampleFormTemperatures(t *testing.T) {
	parse := func(temps string) ([]float64, error) {
		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		for _, kv := range [][2]string{{"name", "sweep"}, {"dataset_id", "1"}, {"temperatures", temps}, {"template", "qwen-boxed"},
			{"model_role", "base"}, {"model_name", "base"}, {"model_url", "http://127.0.0.1:8000/v1"}, {"model_model", "b"},
			{"model_role", "rl"}, {"model_name", "rl"}, {"model_url", "http://127.0.0.1:8001/v1"}, {"model_model", "r"}} {
			w.WriteField(kv[0], kv[1])
		}
		w.Close()
		r := httptest.NewRequest("POST", "/comparisons/sample", &b)
		r.Header.Set("Content-Type", w.FormDataContentType())
		spec, err := parseSampling(r)
		return spec.Temperatures, err
	}
	if got, err := parse("0.6, 1.0, 1.2"); err != nil || len(got) != 3 || got[0] != 0.6 || got[1] != 1 || got[2] != 1.2 {
		t.Errorf("0.6, 1.0, 1.2: %v, %v", got, err)
	}
	if got, err := parse(""); err != nil || got != nil {
		t.Errorf("none: %v, %v", got, err)
	}
	if _, err := parse("0.6"); err == nil || !strings.Contains(err.Error(), "a sweep needs two or more") {
		t.Errorf("one temperature: %v", err)
	}
	if _, err := parse("1, 1.0"); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("twice: %v", err)
	}
}
