package code

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseTests(t *testing.T) {
	cases := []struct {
		name   string
		fields map[string]string
		style  string
		n      int // stdin/stdout tests
		limit  time.Duration
		err    string // field named in the error
	}{
		{"humaneval", map[string]string{"prompt": "def f():\n", "test": "def check(c):\n    assert c() == 1\n", "entry_point": "f"}, StyleHumanEval, 0, 0, ""},
		{"humaneval without check", map[string]string{"prompt": "p", "test": "assert f() == 1", "entry_point": "f"}, "", 0, 0, "test"},
		{"humaneval bad entry point", map[string]string{"test": "def check(c): pass", "entry_point": "f; import os"}, "", 0, 0, "entry_point"},
		{"test without entry point", map[string]string{"test": "def check(c): pass"}, "", 0, 0, "entry_point"},
		{"mbpp", map[string]string{"test_list": `["assert f(1) == 2", "assert f(2) == 3"]`, "test_setup_code": ""}, StyleAsserts, 0, 0, ""},
		{"mbpp not a list", map[string]string{"test_list": `"assert f(1) == 2"`}, "", 0, 0, "test_list"},
		{"apps string", map[string]string{"input_output": `"{\"inputs\": [\"1\\n\", \"2\\n\"], \"outputs\": [\"2\\n\", \"4\\n\"]}"`}, StyleStdio, 2, 0, ""},
		{"apps object, list outputs", map[string]string{"input_output": `{"inputs": ["1\n"], "outputs": [["2", "3"]]}`}, StyleStdio, 1, 0, ""},
		{"apps call-based", map[string]string{"input_output": `{"fn_name": "f", "inputs": [[1]], "outputs": [[2]]}`}, "", 0, 0, "input_output"},
		{"apps mismatched", map[string]string{"input_output": `{"inputs": ["1"], "outputs": []}`}, "", 0, 0, "input_output"},
		{"codecontests", map[string]string{"public_tests": `{"input": ["1\n"], "output": ["1\n"]}`, "private_tests": `{"input": ["2\n", "3\n"], "output": ["2\n", "3\n"]}`, "time_limit": `{"seconds": 2, "nanos": 500000000}`}, StyleStdio, 3, 2500 * time.Millisecond, ""},
		{"lcb list", map[string]string{"public_test_cases": `[{"input": "1\n", "output": "1\n", "testtype": "stdin"}]`, "time_limit": "1500 ms"}, StyleStdio, 1, 1500 * time.Millisecond, ""},
		{"lcb functional", map[string]string{"public_test_cases": `[{"input": "1", "output": "1", "testtype": "functional"}]`}, "", 0, 0, "public_test_cases"},
		{"lcb compressed private tests", map[string]string{"private_test_cases": `eJzLSM3JyVcozy/KSQEAGgQEXQ==`}, "", 0, 0, "private_test_cases"},
		{"tests without output", map[string]string{"tests": `[{"input": "1"}]`}, "", 0, 0, "tests"},
		{"time limit seconds", map[string]string{"tests": `[{"input": "", "output": ""}]`, "time_limit": "2"}, StyleStdio, 1, 2 * time.Second, ""},
		{"time limit too long", map[string]string{"tests": `[{"input": "", "output": ""}]`, "time_limit": "3600"}, "", 0, 0, "time_limit"},
		{"time limit unit", map[string]string{"tests": `[{"input": "", "output": ""}]`, "time_limit": "2 fortnights"}, "", 0, 0, "time_limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseTests(c.fields)
			if c.err != "" {
				var fe *FieldError
				if !errors.As(err, &fe) || fe.Field != c.err {
					t.Fatalf("got %v, want an error naming %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Style != c.style || len(got.IO) != c.n || got.TimeLimit != c.limit {
				t.Errorf("got style %s, %d tests, limit %s; want %s, %d, %s", got.Style, len(got.IO), got.TimeLimit, c.style, c.n, c.limit)
			}
		})
	}
	if _, err := ParseTests(map[string]string{"prompt": "x"}); err == nil {
		t.Error("a row without tests parsed")
	}
	big := `[{"input": "` + strings.Repeat("x", 100) + `", "output": ""}` + strings.Repeat(`, {"input": "", "output": ""}`, MaxTests) + `]`
	if _, err := ParseTests(map[string]string{"tests": big}); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("more than %d tests: %v", MaxTests, err)
	}
}

func TestAssembleHumanEval(t *testing.T) {
	tests := Tests{Style: StyleHumanEval, Prompt: "def f(x):\n    \"\"\"doc\"\"\"\n", Test: "def check(c):\n    assert c(1) == 1\n", EntryPoint: "f"}
	p, err := assemble(tests, "", "    return x\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "def f(x):\n    \"\"\"doc\"\"\"\n    return x\n\ndef check(c):\n    assert c(1) == 1\n\ncheck(f)\n"
	if p.src != want {
		t.Errorf("program:\n%q\nwant\n%q", p.src, want)
	}
	for line, part := range map[int]string{1: "prompt", 3: "completion", 5: "tests", 6: "tests", 8: "check"} {
		if got, _ := p.partOf(line); got != part {
			t.Errorf("line %d is in %q, want %q", line, got, part)
		}
	}
	if p.rule != HarnessHumanEval {
		t.Errorf("rule %q", p.rule)
	}
	if _, err := assemble(tests, "nope", "x"); err == nil {
		t.Error("an unknown harness assembled")
	}
}

// TestStripDocstrings: the rewriting of the fork's harness, case by case
// (each expectation follows its Python code: re.sub of """...""", then
// ”'...”', "END CODE" -> "\n", and a tab before a leading word character).
func TestStripDocstrings(t *testing.T) {
	cases := map[string]string{
		`""" Check.\n    """\n    return 1`:     "\n    return 1",
		"\"\"\" Doc.\n\"\"\"\nreturn x":         "\nreturn x",
		"return x":                              "\treturn x",
		"_x = 1":                                "\t_x = 1",
		"éa = 1":                                "\téa = 1",
		"    return x\nEND CODE":                "    return x\n\n",
		"x = '''a''' + \"\"\"b\"\"\"":           "\tx =  + ",
		"\"\"\"unclosed\n    return 1":          "\"\"\"unclosed\n    return 1",
		"'''one''' and '''two'''\n    return 1": " and \n    return 1",
		`'''a"""b'''c"""`:                       "'''a",
		`"""x'''y"""z'''`:                       "\tz'''",
	}
	for in, want := range cases {
		in = strings.ReplaceAll(in, `\n`, "\n")
		want = strings.ReplaceAll(want, `\n`, "\n")
		if got := stripDocstrings(in); got != want {
			t.Errorf("stripDocstrings(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExtractFenced(t *testing.T) {
	cases := []struct {
		name, in, entry, want string
		ok                    bool
	}{
		{"no fence", "    return x\n", "f", "", false},
		{"python block", "Sure:\n```python\ndef f(x):\n    return x\n```\nDone.", "f", "def f(x):\n    return x\n", true},
		{"the block defining the function", "```python\ndef f(x):\n    return x\n```\nUsage:\n```python\nprint(f(1))\n```", "f", "def f(x):\n    return x\n", true},
		{"python over plain", "```\n1 2\n```\n```py\nprint(3)\n```\n```\n3\n```", "", "print(3)\n", true},
		{"cut off by the length limit", "```python\nimport sys\nprint(1", "", "import sys\nprint(1\n", true},
	}
	for _, c := range cases {
		got, ok := extractFenced(c.in, c.entry)
		if ok != c.ok || got != c.want {
			t.Errorf("%s: got %q %v, want %q %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestSameOutput(t *testing.T) {
	cases := []struct {
		got, want string
		ok        bool
	}{
		{"3\n", "3\n", true},
		{"3", "3\n", true},
		{"3  \r\n\n\n", "3\n", true},
		{"1 2 3\n", "1 2 3\n", true},
		{"1  2\n3", "1 2 3", true}, // tokens
		{"1.0\n", "1\n", true},
		{"0.3333333333\n", "0.333333\n", true},
		{"0.3334\n", "0.333333\n", false},
		{"1.0000001\n", "1\n", false}, // an integer answer is exact
		{"YES\n", "yes\n", false},
		{"", "1\n", false},
		{"1\n2\n", "1\n", false},
	}
	for _, c := range cases {
		if ok, diff := sameOutput(c.got, c.want); ok != c.ok {
			t.Errorf("sameOutput(%q, %q) = %v (%s), want %v", c.got, c.want, ok, diff, c.ok)
		}
	}
	if _, diff := sameOutput("2\n", "3\n"); diff != `line 1 is "2", expected "3"` {
		t.Errorf("diff %q", diff)
	}
}

func TestValidHarness(t *testing.T) {
	for _, h := range []string{"", HarnessHumanEval, HarnessStripDocstrings} {
		if !ValidHarness(h) {
			t.Errorf("%q is not valid", h)
		}
	}
	if ValidHarness("exec") {
		t.Error("an unknown harness is valid")
	}
}
