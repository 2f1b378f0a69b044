package ingest

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// A mapped path that no record has is refused when the mapping is given: a
// mistyped verdict path read as "no verdicts" would have Reach grade every
// sample itself, and the figures would silently change (a trial found
// pass@1 0 % instead of 50 % from correct=okk for a field named ok).
func TestCheckMappingRefusesAbsentPaths(t *testing.T) {
	var file string
	for _, id := range []string{"p1", "p2", "p3"} {
		file += `{"qid": "` + id + `", "rollouts": [{"text": "x", "ok": true}, {"text": "y", "ok": false}]}` + "\n"
	}
	base := Mapping{ProblemID: "qid", List: "rollouts", Completion: "text"}
	for _, tc := range []struct {
		name  string
		edit  func(*Mapping)
		field string // "" = accepted
	}{
		{"right verdict path", func(m *Mapping) { m.Correct = "ok" }, ""},
		{"no verdict path", func(m *Mapping) {}, ""},
		{"mistyped verdict path", func(m *Mapping) { m.Correct = "okk" }, "correct"},
		{"mistyped extracted path", func(m *Mapping) { m.Correct, m.Extracted = "ok", "pred" }, "extracted"},
		{"absent finish reason", func(m *Mapping) { m.FinishReason = "finish_reason" }, "finish_reason"},
		{"absent token count", func(m *Mapping) { m.Tokens = "usage.tokens" }, "tokens"},
		{"absent sample index", func(m *Mapping) { m.SampleIndex = "idx" }, "sample_index"},
	} {
		m := base
		tc.edit(&m)
		err := CheckMapping([]byte(file), "custom.jsonl", &m)
		var e *Error
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.field != "" && (!errors.As(err, &e) || e.Field != tc.field || !strings.Contains(e.Msg, "--map "+tc.field+"=")):
			t.Errorf("%s: got %v, want an error on field %s naming the --map key", tc.name, err, tc.field)
		}
	}
	// Reach's own guess for such a file takes "ok" for the verdict.
	ex, err := Examine(strings.NewReader(file), "custom.jsonl")
	if err != nil || ex.Mapping == nil || ex.Mapping.Correct != "rollouts.ok" && ex.Mapping.Correct != "ok" {
		t.Errorf("guess %+v, err %v: want the verdict from ok", ex.Mapping, err)
	}
}

// A mapping is checked against a file's head, cut at SniffBytes: the cut last line is left out,
// also when the file starts with a byte-order mark (a trial's 262 KB file with one was refused as
// "truncated JSON" on the line crossing the cut), and with CRLF line ends.
func TestCheckMappingOnACutHead(t *testing.T) {
	m := Mapping{ProblemID: "qid", List: "rollouts", Completion: "text", Correct: "ok"}
	for _, tc := range []struct{ name, bom, eol string }{{"plain", "", "\n"}, {"byte-order mark", "\xef\xbb\xbf", "\n"}, {"CRLF and mark", "\xef\xbb\xbf", "\r\n"}} {
		var b strings.Builder
		b.WriteString(tc.bom)
		for i := 0; b.Len() < 2*SniffBytes; i++ {
			b.WriteString(`{"qid": "p` + strconv.Itoa(i) + `", "rollouts": [{"text": "` + strings.Repeat("step ", 4000+i%13) + `", "ok": true}]}` + tc.eol)
		}
		head := []byte(b.String())[:SniffBytes] // what the callers read
		if err := CheckMapping(head, "custom.jsonl", &m); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
