package ingest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tidwall/gjson"
)

var unquoteSeeds = []string{
	`""`, `"plain"`, `"a\nb\tc\\d\"e\/f\bg\fh\ri"`, `"caf\u00e9 \u4e2d"`, `"\ud83d\ude00 smile"`,
	`"lone \ud83d high"`, `"lone \ude00 low"`, `"\ud83d\u0041 bad pair"`, "\"raw \xff byte\"", `"end \\"`,
	`"\u00"`, // not valid JSON: skipped by the fuzz check
}

// FuzzUnquote checks unquote against encoding/json on every valid JSON string literal.
func FuzzUnquote(f *testing.F) {
	for _, s := range unquoteSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, lit []byte) {
		lit = bytes.TrimSpace(lit) // as str does
		if len(lit) < 2 || lit[0] != '"' || !json.Valid(lit) {
			return
		}
		var want string
		if err := json.Unmarshal(lit, &want); err != nil {
			t.Fatal(err)
		}
		if got := unquote(string(lit)); got != want {
			t.Errorf("unquote(%q) = %q, want %q", lit, got, want)
		}
	})
}

// FuzzScanObject checks the fast field scanner against encoding/json on valid objects.
func FuzzScanObject(f *testing.F) {
	for _, s := range []string{`{}`, ` { "a" : 1 , "b":[1,{"c":"}"}], "d\"e": "x\\", "f": null, "g": -1.5e3, "h": {"i": [[]]}} `,
		`{"k":"v"}`, `{"a":true,"b":false}`, `{"s":"[{\"x"}`, `{"l": [ 1 , "a]" ,{"b":[2]}, [] ,null ]}`, `{"e":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, obj []byte) {
		obj = bytes.TrimSpace(obj)
		if len(obj) == 0 || obj[0] != '{' || !json.Valid(obj) {
			return
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(obj, &want); err != nil {
			t.Fatal(err)
		}
		got := map[string]json.RawMessage{}
		n := 0
		err := scanObject(string(obj), func(key, val string) error {
			n++
			got[unquote(`"`+key+`"`)] = json.RawMessage(val)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != len(want) { // duplicate keys: encoding/json keeps one, the scanner sees all
			return
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Errorf("field %q: scanned %q, want %q", k, got[k], v)
			}
			if kindOf(string(v)) != "list" {
				continue
			}
			var elems []json.RawMessage
			if err := json.Unmarshal(v, &elems); err != nil {
				t.Fatal(err)
			}
			var scanned [][]byte
			_ = scanArray(string(v), func(i int, e string) error { scanned = append(scanned, []byte(e)); return nil })
			if len(scanned) != len(elems) {
				t.Fatalf("list %q: scanned %d elements, want %d", v, len(scanned), len(elems))
			}
			for i := range elems {
				if !bytes.Equal(scanned[i], elems[i]) {
					t.Errorf("list %q element %d: scanned %q, want %q", v, i, scanned[i], elems[i])
				}
			}
		}
	})
}

// FuzzValid checks that gjson's validator, which checkJSON uses for speed, agrees with
// encoding/json's on UTF-8 input (checkJSON refuses invalid UTF-8 before).
func FuzzValid(f *testing.F) {
	for _, s := range []string{`{"a":"\u00zz"}`, `{"a":"\q"}`, "{\"a\":\"\x01\"}", `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`,
		`{"a":tru}`, `{"a":[1,]}`, `{"a":1,}`, `{,"a":1}`, `{"a":"\ud800"}`, `{"a" 1}`, `{"a":1}}`, `{"a":1} x`,
		`{"a":[{"b":null,"c":true,"d":-1.5e+3}]}`, `{"a":"\/\b\f\n\r\t\"\\"}`, `{"a":-0}`, `{"a":00}`, `{"a":+1}`, `{"a":.5}`, `{"a":"\u12"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !utf8.Valid(b) || bytes.Count(b, []byte("["))+bytes.Count(b, []byte("{")) > 100 {
			return
		}
		if g, j := gjson.ValidBytes(b), json.Valid(b); g != j {
			t.Errorf("%q: gjson.Valid %v, json.Valid %v", b, g, j)
		}
	})
}

// FuzzAppendJSONString checks the parquet rows' JSON string writer against encoding/json: the same
// string comes back.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "a\"b\\c\n\r\t\x00\x1f", "caf\u00e9 \u4e2d \U0001F600", "bad \xff\xfe utf8", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendJSONString(nil, s)
		var back string
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if utf8.ValidString(s) {
			want = s
		}
		if back != want && back != fixUTF8([]byte(s)) {
			t.Errorf("%q -> %q -> %q", s, b, back)
		}
	})
}
