package ingest

import (
	"errors"
	"strings"
	"testing"
)

// A counts CSV's error from its row's handler names the file and line
// once: the matcher's own errors name them already (a trial read
// "q.csv:2: q.csv:2: problem id: ..."); a plain error gets them.
func TestCountsErrorNamesTheLineOnce(t *testing.T) {
	csv := "problem_id,n,correct\nalgebra/1,4,1\ngeometry/7,4,2\n"
	matcher := func(c Count) error {
		if c.ProblemKey == "geometry/7" {
			return where{file: "q.csv", line: c.Line}.errorf("problem id", "problem %q is not in the dataset", c.ProblemKey)
		}
		return nil
	}
	err := ReadSamples(strings.NewReader(csv), "q.csv", FormatCountsCSV, nil, nil, matcher)
	if err == nil || err.Error() != `q.csv:3: problem id: problem "geometry/7" is not in the dataset` {
		t.Errorf("the matcher's error: %v", err)
	}
	var ie *Error
	if !errors.As(err, &ie) || ie.Line != 3 {
		t.Errorf("not an *Error of line 3: %#v", err)
	}
	plain := func(c Count) error { return errors.New("store full") }
	if err := ReadSamples(strings.NewReader(csv), "q.csv", FormatCountsCSV, nil, nil, plain); err == nil || err.Error() != "q.csv:2: store full" {
		t.Errorf("a plain error: %v", err)
	}
}
