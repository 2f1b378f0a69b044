package ingest

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// A mapping path names a value in a record. The syntax is gjson's (github.com/tidwall/gjson, SYNTAX.md):
// "a.b.c" goes into objects at any depth, "a.0.b" into the first element of a list, "a.#.b" collects b
// from every element, "a\.b" is the key "a.b". JSONPath spellings are accepted too and translated:
// "$.a.b[0].c", "a[*].b", "a['odd key']". In a per-problem mapping (Mapping.List set) a per-sample
// path is looked up in the list item first and then in the whole record (where a list parallel to
// the samples gives one value per sample, and a single value applies to all); "@.x" means the item
// only, "$.x" the record only.
type path struct {
	src   string // as given, for messages
	g     string // gjson path
	first string // the first key when it is a plain key (looked up in the record's fields), else ""
	rest  string // the gjson path after first ("" = first itself)
	root  bool   // "$." prefix: the record only
	item  bool   // "@." prefix: the list item only
}

// parsePath translates a mapping path into gjson syntax.
func parsePath(s string) (path, error) {
	p := path{src: s}
	s = strings.TrimSpace(s)
	switch {
	case s == "$" || s == "@":
		return p, fmt.Errorf("path %q names the whole record, not a field", p.src)
	case strings.HasPrefix(s, "$."), strings.HasPrefix(s, "$["):
		p.root, s = true, strings.TrimPrefix(s[1:], ".")
	case strings.HasPrefix(s, "@."), strings.HasPrefix(s, "@["):
		p.item, s = true, strings.TrimPrefix(s[1:], ".")
	}
	if s == "" {
		return p, fmt.Errorf("empty path")
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			b.WriteByte(c)
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '[':
			j := strings.IndexByte(s[i:], ']')
			if j < 0 {
				return p, fmt.Errorf("path %q: '[' without ']'", p.src)
			}
			inner := strings.TrimSpace(s[i+1 : i+j])
			i += j
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			switch {
			case inner == "*":
				b.WriteByte('#')
			case len(inner) >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner[len(inner)-1] == inner[0]:
				b.WriteString(escapeKey(inner[1 : len(inner)-1]))
			case inner != "" && strings.Trim(inner, "0123456789") == "":
				b.WriteString(inner)
			default:
				return p, fmt.Errorf("path %q: want [N], [*] or ['key'], got [%s]", p.src, inner)
			}
			if i+1 < len(s) && s[i+1] == '.' {
				i++
				b.WriteByte('.')
			}
		default:
			b.WriteByte(c)
		}
	}
	p.g = strings.TrimSuffix(b.String(), ".")
	if p.g == "" || strings.HasPrefix(p.g, ".") || strings.Contains(p.g, "..") {
		return p, fmt.Errorf("path %q: empty part", p.src)
	}
	// Split off a plain first key for the fast lookup in the record's fields.
	end, plain := len(p.g), true
	for i := 0; i < len(p.g) && plain; i++ {
		c := p.g[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '.' {
			end = i
			break
		}
		plain = strings.IndexByte("*?#@|()!=<>%", c) < 0
	}
	if plain {
		p.first = unescapeKey(p.g[:end])
		if end < len(p.g) {
			p.rest = p.g[end+1:]
		}
	}
	return p, nil
}

// escapeKey makes a field name a one-part gjson path.
func escapeKey(k string) string {
	if !strings.ContainsAny(k, `.*?#@|\!()=<>%`) {
		return k
	}
	var b strings.Builder
	for _, r := range k {
		if strings.ContainsRune(`.*?#@|\!()=<>%`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func unescapeKey(k string) string {
	if !strings.Contains(k, `\`) {
		return k
	}
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		if k[i] == '\\' && i+1 < len(k) {
			i++
		}
		b.WriteByte(k[i])
	}
	return b.String()
}

// in looks p up in a record split into fields (top) whose raw text is rec; "" when absent.
func (p path) in(top []kv, rec string) string {
	if p.first == "" {
		return gjson.Get(rec, p.g).Raw
	}
	for _, f := range top {
		if f.key == p.first {
			if p.rest == "" {
				return f.val
			}
			return gjson.Get(f.val, p.rest).Raw
		}
	}
	return ""
}

// at looks p up in one JSON value (a list item); "" when absent.
func (p path) at(val string) string {
	if kindOf(val) != "object" && kindOf(val) != "list" {
		return ""
	}
	return gjson.Get(val, p.g).Raw
}

// paths is a list of alternatives: the first present (and not null) wins.
type paths []path

func mustPaths(ss ...string) paths {
	ps := make(paths, len(ss))
	for i, s := range ss {
		p, err := parsePath(s)
		if err != nil {
			panic(err)
		}
		ps[i] = p
	}
	return ps
}

// in returns the first alternative present in the record, and its path.
func (ps paths) in(top []kv, rec string) (string, path) {
	for _, p := range ps {
		if raw := p.in(top, rec); raw != "" && raw != "null" {
			return raw, p
		}
	}
	return "", path{}
}

func (ps paths) at(val string) (string, path) {
	for _, p := range ps {
		if p.root {
			continue
		}
		if raw := p.at(val); raw != "" && raw != "null" {
			return raw, p
		}
	}
	return "", path{}
}

func (ps paths) String() string {
	var s []string
	for _, p := range ps {
		s = append(s, p.src)
	}
	return strings.Join(s, " or ")
}
