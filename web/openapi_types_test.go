package web

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/analysis"
	"github.com/reach-lab/reach/web/apispec"
)

// schemaNames names the document's schemas of Go types whose names differ
// (types of other packages, or names that read badly in the API); every
// other struct type reachable from the roots below is the schema of its
// own name.
var schemaNames = map[string]string{
	"comparability.Result": "ComparabilityResult", "comparability.Difference": "ComparabilityDifference",
	"comparability.Value": "ComparabilityValue", "training.Dynamics": "TrainingDynamics", "training.Tax": "SharpeningTax",
	"training.TaxDiff": "SharpeningTaxDiff", "ingest.RunMeta": "RunMeta",
	"web.MappingRunJSON": "MappingRun", "web.APIMapping": "FieldMapping", "web.apiDebateEndpoint": "DebateEndpoint",
	"web.apiReview": "Review", "web.apiPairReviews": "PairReviews", "web.shareRequest": "ShareRequest",
	"web.apiComparisonItem": "ComparisonItem", "web.apiShareCreated": "ShareCreated", "web.apiTestResult": "TestResult",
	"web.apiError": "Error", "web.apiReviewsAnswer": "Reviews",
	"web.apiVerifierAudit": "VerifierAudit", "web.apiAuditPlan": "AuditPlan", "web.apiRate": "Rate", "web.apiAuditModel": "AuditModel",
	"web.apiAuditFlip": "AuditFlip", "web.apiAuditItem": "AuditItem",
	"tempsweep.Sweep": "TemperatureSweep", "tempsweep.Model": "SweepModel", "tempsweep.Temp": "SweepTemperature",
	"tempsweep.Point": "SweepPoint", "tempsweep.Union": "SweepUnion", "tempsweep.UnionPoint": "SweepUnionPoint",
	"tempsweep.Crossover": "SweepCrossover", "tempsweep.Bound": "SweepBound",
}

// The document's schemas have exactly the JSON fields of the Go types the
// API encodes, all the way down the report: a field added, renamed or
// removed in Go fails here even when the responses of
// TestOpenAPIResponsesValidate happen not to carry it. A field without
// omitempty is required, and one that is a nil-able pointer, slice or map
// without omitempty admits null.
func TestOpenAPISchemasMatchGoTypes(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(apispec.JSON(), &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[reflect.Type]bool{}
	request := false // checking a request body's types: every field optional
	var check func(rt reflect.Type)
	var visit func(rt reflect.Type)
	// Types with a JSON encoding of their own stand for what they write.
	writesAs := map[reflect.Type]reflect.Type{reflect.TypeOf(analysis.ProblemCounts{}): reflect.TypeOf([]analysis.ProblemCount{})}
	visit = func(rt reflect.Type) {
		if as, ok := writesAs[rt]; ok {
			rt = as
		}
		for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice || rt.Kind() == reflect.Array || rt.Kind() == reflect.Map {
			rt = rt.Elem()
		}
		if rt.Kind() == reflect.Struct && rt != reflect.TypeOf(time.Time{}) && !seen[rt] {
			seen[rt] = true
			check(rt)
		}
	}
	check = func(rt reflect.Type) {
		full := rt.PkgPath()[strings.LastIndex(rt.PkgPath(), "/")+1:] + "." + rt.Name()
		name := rt.Name()
		if n, ok := schemaNames[full]; ok {
			name = n
		}
		s, ok := doc.Components.Schemas[name]
		if !ok {
			t.Errorf("%s: no schema %s in openapi.json", full, name)
			return
		}
		fields := map[string]bool{}
		var walk func(rt reflect.Type)
		walk = func(rt reflect.Type) {
			for i := range rt.NumField() {
				f := rt.Field(i)
				tag := f.Tag.Get("json")
				if f.Anonymous && tag == "" {
					walk(f.Type)
					continue
				}
				if !f.IsExported() || tag == "-" {
					continue
				}
				jname, opts, _ := strings.Cut(tag, ",")
				if jname == "" {
					jname = f.Name
				}
				fields[jname] = true
				omit := strings.Contains(opts, "omitempty")
				p, ok := s.Properties[jname]
				switch {
				case !ok:
					t.Errorf("%s.%s: schema %s has no property %q", full, f.Name, name, jname)
				case request && len(s.Required) > 0:
					t.Errorf("schema %s (a request) requires %v: the handler takes every field as optional", name, s.Required)
				case request:
				case omit == slices.Contains(s.Required, jname):
					t.Errorf("%s.%s: %q required in schema %s: %v, want %v (omitempty: %v)", full, f.Name, jname, name, omit, !omit, omit)
				case !omit && nilable(f.Type) && !neverNil[name+"."+jname] && !strings.Contains(string(p), `"null"`):
					t.Errorf("%s.%s: %q of schema %s can be null (a nil %s), and the schema does not admit it", full, f.Name, jname, name, f.Type.Kind())
				}
				visit(f.Type)
			}
		}
		walk(rt)
		for p := range s.Properties {
			if !fields[p] {
				t.Errorf("schema %s has property %q that %s does not have", name, p, full)
			}
		}
	}
	for _, root := range []any{analysis.Report{}, ComparisonStatus{}, MappingStatus{}, apiDebateEndpoint{}, apiReview{}, apiPairReviews{},
		apiComparisonItem{}, apiShareCreated{}, apiTestResult{}, apiError{}, apiReviewsAnswer{}, apiVerifierAudit{}} {
		visit(reflect.TypeOf(root))
	}
	request = true
	for _, root := range []any{MappingRequest{}, shareRequest{}} {
		visit(reflect.TypeOf(root))
	}
	if len(seen) < 60 {
		t.Errorf("only %d types checked", len(seen))
	}
}

// neverNil are the slices without omitempty that their handler always
// fills (empty, not nil): the schema may say they are never null.
var neverNil = map[string]bool{"MappingStatus.runs": true, "MappingRun.fields": true, "MappingRun.item_fields": true,
	"Reviews.pairs": true, "Reviews.reviews": true, "VerifierAudit.models": true, "VerifierAudit.pairs": true, "VerifierAudit.disagreements": true}

func nilable(t reflect.Type) bool {
	k := t.Kind()
	return k == reflect.Pointer || k == reflect.Slice || k == reflect.Map
}
