package ingest

import (
	"encoding/json"
	"strings"
)

// referenceForms returns the answers a tool's reference field holds. Tools write a reference in
// their own shapes: one answer, a JSON list of accepted answers, or (OpenCompass's math_verify
// evaluator) the Python text of a parsed list, "[1/2, '\\frac{1}{2}']", a sympy form and the LaTeX.
// A list gives each element (an element equal to the dataset's reference is a match); anything
// else is itself.
func referenceForms(ref string) []string {
	t := strings.TrimSpace(ref)
	if len(t) < 2 || t[0] != '[' || t[len(t)-1] != ']' {
		return []string{ref}
	}
	var list []any
	if json.Unmarshal([]byte(t), &list) == nil {
		var out []string
		for _, e := range list {
			switch v := e.(type) {
			case string:
				out = append(out, v)
			case float64, json.Number:
				b, _ := json.Marshal(v)
				out = append(out, string(b))
			}
		}
		return append(out, ref)
	}
	return append(pythonListItems(t[1:len(t)-1]), ref)
}

// pythonListItems splits the inside of a Python list's text at its top-level commas, unquoting
// string items ('...' or "..." with Python's escapes of backslash and quotes).
func pythonListItems(s string) []string {
	var out []string
	depth, quote, start := 0, byte(0), 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '\'' || c == '"':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			out = append(out, pyUnquote(s[start:i]))
			start = i + 1
		}
	}
	if strings.TrimSpace(s[start:]) != "" {
		out = append(out, pyUnquote(s[start:]))
	}
	return out
}

func pyUnquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) < 2 || (s[0] != '\'' && s[0] != '"') || s[len(s)-1] != s[0] {
		return s
	}
	var b strings.Builder
	in := s[1 : len(s)-1]
	for i := 0; i < len(in); i++ {
		if in[i] == '\\' && i+1 < len(in) && strings.IndexByte(`\'"`, in[i+1]) >= 0 {
			i++
		}
		b.WriteByte(in[i])
	}
	return b.String()
}
