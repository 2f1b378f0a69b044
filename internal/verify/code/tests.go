package code

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Test styles.
const (
	// StyleHumanEval: the program is prompt + completion + test +
	// "check(entry_point)" (Chen et al. 2021, openai/human-eval), run once.
	StyleHumanEval = "humaneval"
	// StyleAsserts: MBPP's test_list: the completion is the whole program,
	// followed by test_setup_code and each assert.
	StyleAsserts = "asserts"
	// StyleStdio: the completion is a whole program, run once per test
	// with the test's input on stdin; its stdout must match the output
	// (APPS, CodeContests, LiveCodeBench stdin problems).
	StyleStdio = "stdio"
)

// Size limits of one problem's tests (the dataset reader refuses more).
const (
	MaxTests     = 1000     // stdin/stdout tests per problem
	MaxTestBytes = 64 << 20 // inputs + outputs of one problem, bytes
)

// IOTest is one stdin/stdout test.
type IOTest struct {
	Input, Output string
}

// Tests is what the code verifier runs for one problem, read from the
// dataset row's fields by ParseTests.
type Tests struct {
	Style string
	// StyleHumanEval: the prompt (function signature and docstring), the
	// test code defining check(candidate), and the function's name.
	Prompt, Test, EntryPoint string
	// StyleAsserts: setup code and assert statements.
	Setup   string
	Asserts []string
	// StyleStdio: the tests, in order.
	IO []IOTest
	// TimeLimit is the problem's own limit per run (0: the default).
	TimeLimit time.Duration
}

// Fields that make a dataset row a code problem (see ParseTests).
var TestFields = []string{"test", "entry_point", "test_list", "input_output", "public_tests", "private_tests",
	"generated_tests", "tests", "test_cases", "public_test_cases", "private_test_cases"}

// IsCodeRow reports whether a dataset row with these field names is a code
// problem: it has a HumanEval test or entry point, MBPP asserts, or
// stdin/stdout tests.
func IsCodeRow(has func(field string) bool) bool {
	for _, f := range TestFields {
		if has(f) {
			return true
		}
	}
	return false
}

// FieldError names the dataset field a problem's tests could not be read from.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// ParseTests reads a code problem's tests from its dataset fields (strings;
// lists and objects as JSON text, as the dataset reader keeps them):
//
//   - HumanEval: prompt, test (defining check(candidate)), entry_point.
//   - MBPP: test_list (a list of assert statements), optional test_setup_code.
//   - stdin/stdout: input_output (APPS: {"inputs": [...], "outputs": [...]},
//     an object or a JSON string), public_tests / private_tests /
//     generated_tests (CodeContests: {"input": [...], "output": [...]}), or
//     tests / test_cases / public_test_cases / private_test_cases (a list of
//     {"input", "output"}, LiveCodeBench's layout). All given sets are run.
//   - time_limit (optional): seconds as a number, "2 seconds", "1500 ms",
//     or CodeContests' {"seconds", "nanos"}.
//
// Errors are *FieldError naming the field. Call-based tests (APPS fn_name,
// LiveCodeBench "functional") are refused: only stdin/stdout is supported.
func ParseTests(fields map[string]string) (Tests, error) {
	var t Tests
	if tl, ok := fields["time_limit"]; ok && strings.TrimSpace(tl) != "" {
		d, err := parseTimeLimit(tl)
		if err != nil {
			return t, fieldErr("time_limit", "%v", err)
		}
		t.TimeLimit = d
	}
	if test, ok := fields["test"]; ok && fields["entry_point"] != "" {
		t.Style, t.Prompt, t.Test, t.EntryPoint = StyleHumanEval, fields["prompt"], test, strings.TrimSpace(fields["entry_point"])
		if !isIdentifier(t.EntryPoint) {
			return t, fieldErr("entry_point", "%q is not a Python function name", t.EntryPoint)
		}
		if !strings.Contains(test, "def check") {
			return t, fieldErr("test", "has no check(candidate) function (HumanEval's layout)")
		}
		return t, nil
	}
	if raw, ok := fields["test_list"]; ok {
		var list []string
		if err := json.Unmarshal([]byte(raw), &list); err != nil {
			return t, fieldErr("test_list", "want a list of assert statements: %v", err)
		}
		if len(list) == 0 {
			return t, fieldErr("test_list", "empty")
		}
		t.Style, t.Asserts, t.Setup = StyleAsserts, list, fields["test_setup_code"]
		return t, nil
	}
	size := 0
	add := func(field string, ts []IOTest) error {
		for _, x := range ts {
			size += len(x.Input) + len(x.Output)
		}
		t.IO = append(t.IO, ts...)
		if len(t.IO) > MaxTests {
			return fieldErr(field, "more than %d tests", MaxTests)
		}
		if size > MaxTestBytes {
			return fieldErr(field, "tests larger than %d MiB", MaxTestBytes>>20)
		}
		return nil
	}
	for _, f := range []string{"input_output", "public_tests", "private_tests", "generated_tests"} {
		raw, ok := fields[f]
		if !ok {
			continue
		}
		ts, err := parseInputsOutputs(f, raw)
		if err != nil {
			return t, err
		}
		if err := add(f, ts); err != nil {
			return t, err
		}
	}
	for _, f := range []string{"tests", "test_cases", "public_test_cases", "private_test_cases"} {
		raw, ok := fields[f]
		if !ok {
			continue
		}
		ts, err := parseTestList(f, raw)
		if err != nil {
			return t, err
		}
		if err := add(f, ts); err != nil {
			return t, err
		}
	}
	if len(t.IO) > 0 {
		t.Style = StyleStdio
		return t, nil
	}
	if _, ok := fields["test"]; ok {
		return t, fieldErr("entry_point", "missing: a HumanEval test needs the name of the function it checks")
	}
	if _, ok := fields["entry_point"]; ok {
		return t, fieldErr("test", "missing: a HumanEval problem needs its test code")
	}
	return t, errors.New("no tests: a code problem needs test + entry_point (HumanEval), test_list (MBPP) or stdin/stdout tests")
}

// unquote accepts a JSON value or a JSON string holding one (APPS and
// LiveCodeBench store their tests as JSON text inside a string field).
func unquote(raw string) []byte {
	b := []byte(strings.TrimSpace(raw))
	var s string
	if len(b) > 0 && b[0] == '"' && json.Unmarshal(b, &s) == nil {
		return []byte(strings.TrimSpace(s))
	}
	return b
}

// ioText reads one input or output: a string, or a list of lines.
func ioText(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var lines []string
	if json.Unmarshal(raw, &lines) == nil {
		return strings.Join(lines, "\n") + "\n", true
	}
	return "", false
}

func parseInputsOutputs(field, raw string) ([]IOTest, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(unquote(raw), &obj); err != nil {
		return nil, fieldErr(field, "want an object with inputs and outputs lists: %v", err)
	}
	if fn, ok := obj["fn_name"]; ok && string(fn) != "null" {
		return nil, fieldErr(field, "has fn_name (call-based tests): only stdin/stdout tests are supported")
	}
	get := func(names ...string) ([]json.RawMessage, string, error) {
		for _, n := range names {
			if v, ok := obj[n]; ok {
				var list []json.RawMessage
				if err := json.Unmarshal(v, &list); err != nil {
					return nil, n, fieldErr(field, "%s: want a list: %v", n, err)
				}
				return list, n, nil
			}
		}
		return nil, "", fieldErr(field, "missing %s", names[0])
	}
	ins, inName, err := get("inputs", "input")
	if err != nil {
		return nil, err
	}
	outs, _, err := get("outputs", "output")
	if err != nil {
		return nil, err
	}
	if len(ins) != len(outs) {
		return nil, fieldErr(field, "%d %s but %d outputs", len(ins), inName, len(outs))
	}
	ts := make([]IOTest, len(ins))
	for i := range ins {
		in, ok1 := ioText(ins[i])
		out, ok2 := ioText(outs[i])
		if !ok1 || !ok2 {
			return nil, fieldErr(field, "test %d: input and output must be text", i+1)
		}
		ts[i] = IOTest{Input: in, Output: out}
	}
	return ts, nil
}

func parseTestList(field, raw string) ([]IOTest, error) {
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(unquote(raw), &list); err != nil {
		return nil, fieldErr(field, "want a list of {input, output} objects: %v", err)
	}
	ts := make([]IOTest, 0, len(list))
	for i, x := range list {
		if tt, ok := x["testtype"]; ok {
			var s string
			_ = json.Unmarshal(tt, &s)
			if s != "" && s != "stdin" {
				return nil, fieldErr(field, "test %d: testtype %q: only stdin/stdout tests are supported", i+1, s)
			}
		}
		in, ok1 := ioText(x["input"])
		out, ok2 := ioText(x["output"])
		if x["input"] == nil || x["output"] == nil || !ok1 || !ok2 {
			return nil, fieldErr(field, "test %d: want text fields input and output", i+1)
		}
		ts = append(ts, IOTest{Input: in, Output: out})
	}
	return ts, nil
}

// parseTimeLimit reads seconds: 2, 2.5, "2", "2 seconds", "1500 ms",
// "2s", or {"seconds": 2, "nanos": 500000000}. Limits are 0.1 s to 60 s.
func parseTimeLimit(raw string) (time.Duration, error) {
	s := strings.TrimSpace(string(unquote(raw)))
	var obj struct {
		Seconds *float64 `json:"seconds"`
		Nanos   float64  `json:"nanos"`
	}
	var secs float64
	if strings.HasPrefix(s, "{") {
		if err := json.Unmarshal([]byte(s), &obj); err != nil || obj.Seconds == nil {
			return 0, fmt.Errorf("want seconds, e.g. 2 or {\"seconds\": 2, \"nanos\": 0}")
		}
		secs = *obj.Seconds + obj.Nanos/1e9
	} else {
		num, unit := s, ""
		for i, r := range s {
			if (r < '0' || r > '9') && r != '.' {
				num, unit = strings.TrimSpace(s[:i]), strings.ToLower(strings.TrimSpace(s[i:]))
				break
			}
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, fmt.Errorf("%q: want seconds, e.g. 2 or \"1500 ms\"", s)
		}
		switch unit {
		case "", "s", "sec", "secs", "second", "seconds":
			secs = v
		case "ms", "millisecond", "milliseconds":
			secs = v / 1000
		default:
			return 0, fmt.Errorf("%q: unknown unit %q", s, unit)
		}
	}
	if math.IsNaN(secs) || secs < 0.1 || secs > 60 {
		return 0, fmt.Errorf("%g s is outside 0.1 s to 60 s", secs)
	}
	return time.Duration(secs * float64(time.Second)), nil
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127 || i > 0 && r >= '0' && r <= '9' {
			continue
		}
		return false
	}
	return true
}
