package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/reach-lab/reach/internal/analysis"
)

// A chart without data (CoT on a counts-only comparison) answers 404 with
// the reason as plain text, or as JSON for NAME.json, never an HTML page.
func TestChartDataNotFoundIsPlainWithTheReason(t *testing.T) {
	rep := &analysis.Report{ComparisonID: 7, CoT: &analysis.CoTReport{Status: analysis.DebateUnavailable,
		Note: "no model has completion texts to judge"}}
	e := &analysis.Entry{Report: rep}
	s := &Server{}
	for _, tc := range []struct {
		file, contentType string
	}{
		{"cot.csv", "text/plain; charset=utf-8"},
		{"cot.json", "application/json"},
	} {
		rc := chi.NewRouteContext()
		rc.URLParams.Add("chart", tc.file)
		r := httptest.NewRequest("GET", "/comparisons/7/data/"+tc.file, nil)
		r = r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, rc))
		w := httptest.NewRecorder()
		if err := writeChartData(w, r, e, tc.file); err != nil {
			s.dataFail(w, r, err)
		}
		if w.Code != http.StatusNotFound || w.Header().Get("Content-Type") != tc.contentType {
			t.Fatalf("%s: %d %q, want 404 %q", tc.file, w.Code, w.Header().Get("Content-Type"), tc.contentType)
		}
		body := w.Body.String()
		if strings.Contains(body, "<") {
			t.Errorf("%s: body looks like HTML: %q", tc.file, body)
		}
		if tc.contentType == "application/json" {
			var v struct{ Error string }
			if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
				t.Fatalf("%s: %v in %q", tc.file, err, body)
			}
			body = v.Error
		}
		if !strings.Contains(body, "not available: no model has completion texts to judge") {
			t.Errorf("%s: body %q does not give the reason", tc.file, body)
		}
	}
}
