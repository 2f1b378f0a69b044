package analysis

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"unsafe"

	"github.com/reach-lab/reach/internal/passk"
)

// The problem table of a stored report is written in a compact binary
// form ahead of the report's JSON: decoded from JSON (or gob) a million rows
// allocated 1.6–2.2 GB, several times what they hold; read here they take
// one allocation per column.
//
// Layout (unsigned/signed varints unless said): "RT1", rows, models,
// total key bytes, the string table (count, then each length and bytes:
// subjects, levels, regions and guess rules), then per row: problem id
// (signed), key length and bytes, Idx (signed), subject, level and region
// as string-table indexes, n and c per model, a byte per model saying
// whether P follows (8 bytes, IEEE 754 little-endian; else P is −1), and a
// byte saying whether a guess follows (its rule index and 8-byte chance).
// The per-problem lists follow (writeLists), then the report's JSON.

const rowMagic = "RT1"

// Bounds a stored table is checked against before anything is allocated.
const (
	maxStoredRows   = 1 << 28
	maxStoredModels = 1 << 12
	maxStoredKeys   = 1 << 34
	maxStoredString = 1 << 20
)

// binWriter writes the codec's values; write errors are the zstd
// writer's, reported by its Close.
type binWriter struct {
	w   *bufio.Writer
	buf [binary.MaxVarintLen64]byte
}

func (b *binWriter) uv(x uint64) { b.w.Write(b.buf[:binary.PutUvarint(b.buf[:], x)]) }
func (b *binWriter) sv(x int64)  { b.w.Write(b.buf[:binary.PutVarint(b.buf[:], x)]) }
func (b *binWriter) f64(x float64) {
	binary.LittleEndian.PutUint64(b.buf[:8], math.Float64bits(x))
	b.w.Write(b.buf[:8])
}
func (b *binWriter) str(s string) {
	b.uv(uint64(len(s)))
	b.w.WriteString(s)
}
func (b *binWriter) flag(v bool) {
	if v {
		b.w.WriteByte(1)
	} else {
		b.w.WriteByte(0)
	}
}

// binReader reads them; the first error sticks, and every later read
// returns zero values.
type binReader struct {
	r   *bufio.Reader
	err error
	b8  [8]byte
}

// uv reads an unsigned varint (encoding/binary's), byte by byte from the
// bufio.Reader itself: through binary.ReadUvarint's io.ByteReader it was
// most of reading a million rows back.
func (b *binReader) uv() uint64 {
	if b.err != nil {
		return 0
	}
	var x uint64
	var s uint
	for i := range binary.MaxVarintLen64 {
		c, err := b.r.ReadByte()
		if err != nil {
			b.err = err
			return 0
		}
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break // overflows 64 bits
			}
			return x | uint64(c)<<s
		}
		x |= uint64(c&0x7f) << s
		s += 7
	}
	b.err = errRowTable
	return 0
}

// sv reads a signed (zig-zag) varint.
func (b *binReader) sv() int64 {
	ux := b.uv()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

func (b *binReader) f64() float64 {
	if b.err != nil {
		return 0
	}
	_, b.err = io.ReadFull(b.r, b.b8[:])
	return math.Float64frombits(binary.LittleEndian.Uint64(b.b8[:]))
}

func (b *binReader) flag() bool {
	if b.err != nil {
		return false
	}
	var c byte
	if c, b.err = b.r.ReadByte(); b.err == nil && c > 1 {
		b.err = errRowTable
	}
	return c == 1
}

// bytes reads n bytes into p (len(p) == n).
func (b *binReader) bytes(p []byte) {
	if b.err == nil {
		_, b.err = io.ReadFull(b.r, p)
	}
}

// str reads a string of at most maxStoredString bytes.
func (b *binReader) str() string {
	l := b.uv()
	if b.err == nil && l > maxStoredString {
		b.err = errRowTable
	}
	if b.err != nil {
		return ""
	}
	p := make([]byte, l)
	b.bytes(p)
	return string(p)
}

// fail wraps the sticky error (errRowTable when the data is short or wrong).
func (b *binReader) fail(section, what string) error {
	if b.err == nil || errors.Is(b.err, io.EOF) || errors.Is(b.err, io.ErrUnexpectedEOF) {
		b.err = fmt.Errorf("%w (%v)", errRowTable, b.err)
	}
	return fmt.Errorf("%s: %s: %w", section, what, b.err)
}

var errRowTable = errors.New("stored problem table is malformed")

func writeRows(w *bufio.Writer, rows []ProblemRow) error {
	models, keyBytes := 0, 0
	if len(rows) > 0 {
		models = len(rows[0].Counts)
	}
	index := map[string]uint64{}
	var table []string
	intern := func(s string) {
		if _, ok := index[s]; !ok {
			index[s] = uint64(len(table))
			table = append(table, s)
		}
	}
	for i := range rows {
		r := &rows[i]
		if len(r.Counts) != models || len(r.P) != models {
			return fmt.Errorf("problem table row %d (%s): %d counts and %d p-values for %d models", i, r.Key, len(r.Counts), len(r.P), models)
		}
		keyBytes += len(r.Key)
		intern(r.Subject)
		intern(r.Level)
		intern(r.Region)
		if r.Guess != nil {
			intern(r.Guess.Rule)
		}
	}
	b := &binWriter{w: w}
	w.WriteString(rowMagic)
	b.uv(uint64(len(rows)))
	b.uv(uint64(models))
	b.uv(uint64(keyBytes))
	b.uv(uint64(len(table)))
	for _, s := range table {
		b.str(s)
	}
	for i := range rows {
		r := &rows[i]
		b.sv(r.ProblemID)
		b.str(r.Key)
		b.sv(int64(r.Idx))
		b.uv(index[r.Subject])
		b.uv(index[r.Level])
		b.uv(index[r.Region])
		for _, c := range r.Counts {
			b.uv(uint64(c.N))
			b.uv(uint64(c.C))
		}
		for _, p := range r.P {
			b.flag(p != -1)
			if p != -1 {
				b.f64(p)
			}
		}
		b.flag(r.Guess != nil)
		if r.Guess != nil {
			b.uv(index[r.Guess.Rule])
			b.f64(r.Guess.Chance)
		}
	}
	return nil
}

func readRows(r *bufio.Reader) ([]ProblemRow, error) {
	b := &binReader{r: r}
	const section = "problem table"
	magic := make([]byte, len(rowMagic))
	if b.bytes(magic); b.err != nil || string(magic) != rowMagic {
		return nil, b.fail(section, "no header")
	}
	n, models, keyBytes, strs := b.uv(), b.uv(), b.uv(), b.uv()
	if b.err == nil && (n > maxStoredRows || models > maxStoredModels || keyBytes > maxStoredKeys || strs > maxStoredRows) {
		b.err = errRowTable
	}
	if b.err != nil {
		return nil, b.fail(section, "header")
	}
	table := make([]string, strs)
	for i := range table {
		table[i] = b.str()
	}
	if b.err != nil {
		return nil, b.fail(section, "string table")
	}
	str := func() string {
		i := b.uv()
		if b.err == nil && i >= uint64(len(table)) {
			b.err = errRowTable
		}
		if b.err != nil {
			return ""
		}
		return table[i]
	}
	rows := make([]ProblemRow, n)
	counts := make([]passk.Count, n*models)
	ps := make([]float64, n*models)
	keys := make([]byte, 0, keyBytes)
	keyEnd := make([]int, n)
	var guesses []Guess
	guessAt := map[int]int{}
	m := int(models)
	for i := range rows {
		row := &rows[i]
		row.ProblemID = b.sv()
		l := b.uv()
		if b.err == nil && uint64(len(keys))+l > keyBytes {
			b.err = errRowTable
		}
		if b.err != nil {
			return nil, b.fail(section, fmt.Sprintf("row %d key", i))
		}
		k := len(keys)
		keys = keys[:k+int(l)]
		b.bytes(keys[k:])
		keyEnd[i] = len(keys)
		row.Idx = int(b.sv())
		row.Subject, row.Level, row.Region = str(), str(), str()
		row.Counts = counts[i*m : (i+1)*m : (i+1)*m]
		for j := range row.Counts {
			row.Counts[j] = passk.Count{N: int(b.uv()), C: int(b.uv())}
		}
		row.P = ps[i*m : (i+1)*m : (i+1)*m]
		for j := range row.P {
			row.P[j] = -1
			if b.flag() {
				row.P[j] = b.f64()
			}
		}
		if b.flag() {
			guessAt[i] = len(guesses)
			guesses = append(guesses, Guess{Rule: str(), Chance: b.f64()})
		}
		if b.err != nil {
			return nil, b.fail(section, fmt.Sprintf("row %d", i))
		}
	}
	all := string(keys)
	start := 0
	for i := range rows {
		rows[i].Key = all[start:keyEnd[i]]
		start = keyEnd[i]
		if g, ok := guessAt[i]; ok {
			rows[i].Guess = &guesses[g]
		}
	}
	return rows, nil
}

// bulkyLists returns the report's per-problem lists other than the
// problem table, in a fixed order: they are stored in binary next to the
// table (as JSON they made up most of a million-problem report's 100 MB
// and 580 MB of allocations to decode).
func (rep *Report) bulkyLists() (tests []*[]ProblemTest, ids []*[]string) {
	ids = append(ids, &rep.BaseOnly)
	for i := range rep.Pairs {
		p := &rep.Pairs[i]
		tests = append(tests, &p.BaseOnlyTests, &p.OtherOnlyTests)
		ids = append(ids, &p.BaseOnly, &p.OtherOnly)
	}
	if rep.Support != nil {
		for i := range rep.Support.Pairs {
			p := &rep.Support.Pairs[i]
			tests = append(tests, &p.ShrunkTests, &p.ExpandedTests)
		}
	}
	for i := range rep.Intersections {
		ids = append(ids, &rep.Intersections[i].Problems)
	}
	return tests, ids
}

// withoutBulkyLists returns a shallow copy of rep whose bulky lists are
// nil (rep is not changed: it may be shared).
func (rep *Report) withoutBulkyLists() *Report {
	cp := *rep
	cp.Pairs = slices.Clone(rep.Pairs)
	cp.Intersections = slices.Clone(rep.Intersections)
	if rep.Support != nil {
		s := *rep.Support
		s.Pairs = slices.Clone(rep.Support.Pairs)
		cp.Support = &s
	}
	tests, ids := cp.bulkyLists()
	for _, t := range tests {
		*t = nil
	}
	for _, l := range ids {
		*l = nil
	}
	return &cp
}

// rowIndexes returns the problem table's index of each of n problem keys
// when they come in the table's order (the lists do: dataset order), so a
// list can be stored as row numbers and read back sharing the table's keys;
// false when they do not.
func rowIndexes(rows []ProblemRow, n int, key func(i int) string) ([]int, bool) {
	out := make([]int, n)
	j := 0
	for i := range n {
		k := key(i)
		for j < len(rows) && rows[j].Key != k {
			j++
		}
		if j == len(rows) {
			return nil, false
		}
		out[i] = j
		j++
	}
	return out, true
}

// writeLists writes the lists after the problem table: each list's problem
// ids as row numbers (deltas) when they follow the table's order, else as
// strings.
func writeLists(w *bufio.Writer, rows []ProblemRow, tests []*[]ProblemTest, ids []*[]string) {
	b := &binWriter{w: w}
	// The problem ids of a list: a flag saying how (row numbers or
	// strings), then per item a row-number delta or a string (idOf).
	var at []int
	prev := -1
	howIDs := func(n int, key func(i int) string) {
		at, _ = rowIndexes(rows, n, key)
		b.flag(at != nil)
		prev = -1
	}
	idOf := func(i int, id string) {
		if at == nil {
			b.str(id)
			return
		}
		b.uv(uint64(at[i] - prev - 1))
		prev = at[i]
	}
	// Each list: 0 for nil, else 1 + its length (nil and empty differ in the JSON).
	b.uv(uint64(len(tests)))
	for _, l := range tests {
		if *l == nil {
			b.uv(0)
			continue
		}
		list := *l
		b.uv(uint64(len(list)) + 1)
		howIDs(len(list), func(i int) string { return list[i].ProblemID })
		for i, t := range list {
			idOf(i, t.ProblemID)
			b.uv(uint64(t.BaseC))
			b.uv(uint64(t.BaseN))
			b.uv(uint64(t.OtherC))
			b.uv(uint64(t.OtherN))
			b.f64(t.P)
			b.f64(t.PHolm)
			b.flag(t.CouldBeLuck)
			b.flag(t.Guessable)
		}
	}
	b.uv(uint64(len(ids)))
	for _, l := range ids {
		if *l == nil {
			b.uv(0)
			continue
		}
		list := *l
		b.uv(uint64(len(list)) + 1)
		howIDs(len(list), func(i int) string { return list[i] })
		for i, s := range list {
			idOf(i, s)
		}
	}
}

// readLists reads what writeLists wrote; ids stored as row numbers share
// the keys of rows.
func readLists(r *bufio.Reader, rows []ProblemRow) (tests [][]ProblemTest, ids [][]string, err error) {
	b := &binReader{r: r}
	const section = "problem lists"
	byRow, prev := false, -1
	id := func() string {
		if !byRow {
			return b.str()
		}
		d := b.uv()
		if b.err == nil && d >= uint64(len(rows)-prev-1) {
			b.err = errRowTable
		}
		if b.err != nil {
			return ""
		}
		prev += int(d) + 1
		return rows[prev].Key
	}
	// length reads a list's header: false for a nil list.
	length := func() (int, bool) {
		n := b.uv()
		if b.err == nil && n > maxStoredRows+1 {
			b.err = errRowTable
		}
		if b.err != nil || n == 0 {
			return 0, false
		}
		byRow, prev = b.flag(), -1
		return int(n - 1), b.err == nil
	}
	nt := b.uv()
	if b.err == nil && nt > maxStoredModels*4 {
		b.err = errRowTable
	}
	if b.err != nil {
		return nil, nil, b.fail(section, "header")
	}
	tests = make([][]ProblemTest, nt)
	for i := range tests {
		n, ok := length()
		if !ok {
			if b.err != nil {
				return nil, nil, b.fail(section, "tests")
			}
			continue
		}
		l := make([]ProblemTest, n)
		for j := range l {
			t := &l[j]
			t.ProblemID = id()
			t.BaseC, t.BaseN, t.OtherC, t.OtherN = int(b.uv()), int(b.uv()), int(b.uv()), int(b.uv())
			t.P, t.PHolm = b.f64(), b.f64()
			t.CouldBeLuck, t.Guessable = b.flag(), b.flag()
		}
		if b.err != nil {
			return nil, nil, b.fail(section, "tests")
		}
		tests[i] = l
	}
	ni := b.uv()
	if b.err == nil && ni > maxStoredRows {
		b.err = errRowTable
	}
	if b.err != nil {
		return nil, nil, b.fail(section, "ids header")
	}
	ids = make([][]string, ni)
	for i := range ids {
		n, ok := length()
		if !ok {
			if b.err != nil {
				return nil, nil, b.fail(section, "ids")
			}
			continue
		}
		l := make([]string, n)
		for j := range l {
			l[j] = id()
		}
		if b.err != nil {
			return nil, nil, b.fail(section, "ids")
		}
		ids[i] = l
	}
	return tests, ids, nil
}

// attachLists puts lists read by readLists back where bulkyLists says.
func (rep *Report) attachLists(tests [][]ProblemTest, ids [][]string) error {
	tp, ip := rep.bulkyLists()
	if len(tp) != len(tests) || len(ip) != len(ids) {
		return fmt.Errorf("problem lists: %d and %d stored for %d and %d: %w", len(tests), len(ids), len(tp), len(ip), errRowTable)
	}
	for i, p := range tp {
		*p = tests[i]
	}
	for i, p := range ip {
		*p = ids[i]
	}
	return nil
}

// ApproxBytes estimates the memory a report holds: its problem table and
// per-problem lists, which are all that grow with the number of problems
// (what pages derive from it and keep with it adds about a tenth).
func (rep *Report) ApproxBytes() int64 {
	const rowBytes, testBytes, idBytes, fixed = int64(unsafe.Sizeof(ProblemRow{})), int64(unsafe.Sizeof(ProblemTest{})), int64(16), 64 << 10
	n := int64(fixed)
	for i := range rep.Rows {
		r := &rep.Rows[i]
		n += rowBytes + int64(len(r.Key)) + int64(len(r.Counts))*int64(unsafe.Sizeof(r.Counts[0])) + int64(len(r.P))*8
	}
	tests, ids := rep.bulkyLists()
	for _, l := range tests {
		for _, t := range *l {
			n += testBytes + int64(len(t.ProblemID))
		}
	}
	for _, l := range ids {
		for _, s := range *l {
			n += idBytes + int64(len(s))
		}
	}
	return n + n/10
}
