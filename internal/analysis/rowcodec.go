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

const rowMagic = "RT1"

// Bounds a stored table is checked against before anything is allocated.
const (
	maxStoredRows   = 1 << 28
	maxStoredModels = 1 << 12
	maxStoredKeys   = 1 << 34
	maxStoredString = 1 << 20
)

func writeRows(w *bufio.Writer, rows []ProblemRow) error {
	models, keyBytes := 0, 0
	if len(rows) > 0 {
		models = len(rows[0].Counts)
	}
	index := map[string]uint64{}
	var table []string
	str := func(s string) {
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
		str(r.Subject)
		str(r.Level)
		str(r.Region)
		if r.Guess != nil {
			str(r.Guess.Rule)
		}
	}
	var buf [binary.MaxVarintLen64]byte
	uv := func(x uint64) { w.Write(buf[:binary.PutUvarint(buf[:], x)]) }
	sv := func(x int64) { w.Write(buf[:binary.PutVarint(buf[:], x)]) }
	f64 := func(x float64) {
		binary.LittleEndian.PutUint64(buf[:8], math.Float64bits(x))
		w.Write(buf[:8])
	}
	w.WriteString(rowMagic)
	uv(uint64(len(rows)))
	uv(uint64(models))
	uv(uint64(keyBytes))
	uv(uint64(len(table)))
	for _, s := range table {
		uv(uint64(len(s)))
		w.WriteString(s)
	}
	for i := range rows {
		r := &rows[i]
		sv(r.ProblemID)
		uv(uint64(len(r.Key)))
		w.WriteString(r.Key)
		sv(int64(r.Idx))
		uv(index[r.Subject])
		uv(index[r.Level])
		uv(index[r.Region])
		for _, c := range r.Counts {
			uv(uint64(c.N))
			uv(uint64(c.C))
		}
		for _, p := range r.P {
			if p == -1 {
				w.WriteByte(0)
				continue
			}
			w.WriteByte(1)
			f64(p)
		}
		if r.Guess == nil {
			w.WriteByte(0)
			continue
		}
		w.WriteByte(1)
		uv(index[r.Guess.Rule])
		f64(r.Guess.Chance)
	}
	return nil
}

var errRowTable = errors.New("stored problem table is malformed")

func readRows(r *bufio.Reader) ([]ProblemRow, error) {
	var err error
	fail := func(what string) error {
		if err == nil {
			err = errRowTable
		}
		return fmt.Errorf("problem table: %s: %w", what, err)
	}
	uv := func() uint64 {
		if err != nil {
			return 0
		}
		var x uint64
		x, err = binary.ReadUvarint(r)
		return x
	}
	sv := func() int64 {
		if err != nil {
			return 0
		}
		var x int64
		x, err = binary.ReadVarint(r)
		return x
	}
	var b8 [8]byte
	f64 := func() float64 {
		if err != nil {
			return 0
		}
		_, err = io.ReadFull(r, b8[:])
		return math.Float64frombits(binary.LittleEndian.Uint64(b8[:]))
	}
	flag := func() bool {
		if err != nil {
			return false
		}
		var c byte
		c, err = r.ReadByte()
		if err == nil && c > 1 {
			err = errRowTable
		}
		return c == 1
	}
	magic := make([]byte, len(rowMagic))
	if _, err = io.ReadFull(r, magic); err != nil || string(magic) != rowMagic {
		return nil, fail("no header")
	}
	n, models, keyBytes, strs := uv(), uv(), uv(), uv()
	if err != nil || n > maxStoredRows || models > maxStoredModels || keyBytes > maxStoredKeys || strs > maxStoredRows {
		return nil, fail("header")
	}
	table := make([]string, strs)
	for i := range table {
		l := uv()
		if err != nil || l > maxStoredString {
			return nil, fail("string table")
		}
		s := make([]byte, l)
		if _, err = io.ReadFull(r, s); err != nil {
			return nil, fail("string table")
		}
		table[i] = string(s)
	}
	str := func() string {
		i := uv()
		if err == nil && i >= uint64(len(table)) {
			err = errRowTable
		}
		if err != nil {
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
		row.ProblemID = sv()
		l := uv()
		if err != nil || uint64(len(keys))+l > keyBytes {
			return nil, fail(fmt.Sprintf("row %d key", i))
		}
		k := len(keys)
		keys = keys[:k+int(l)]
		if _, err = io.ReadFull(r, keys[k:]); err != nil {
			return nil, fail(fmt.Sprintf("row %d key", i))
		}
		keyEnd[i] = len(keys)
		row.Idx = int(sv())
		row.Subject, row.Level, row.Region = str(), str(), str()
		row.Counts = counts[i*m : (i+1)*m : (i+1)*m]
		for j := range row.Counts {
			row.Counts[j] = passk.Count{N: int(uv()), C: int(uv())}
		}
		row.P = ps[i*m : (i+1)*m : (i+1)*m]
		for j := range row.P {
			row.P[j] = -1
			if flag() {
				row.P[j] = f64()
			}
		}
		if flag() {
			guessAt[i] = len(guesses)
			guesses = append(guesses, Guess{Rule: str(), Chance: f64()})
		}
		if err != nil {
			return nil, fail(fmt.Sprintf("row %d", i))
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
	var buf [binary.MaxVarintLen64]byte
	uv := func(x uint64) { w.Write(buf[:binary.PutUvarint(buf[:], x)]) }
	f64 := func(x float64) {
		binary.LittleEndian.PutUint64(buf[:8], math.Float64bits(x))
		w.Write(buf[:8])
	}
	str := func(s string) {
		uv(uint64(len(s)))
		w.WriteString(s)
	}
	// The problem ids of a list: a byte saying how, then per item either a
	// row-number delta or a string (idOf).
	var at []int
	prev := -1
	howIDs := func(n int, key func(i int) string) {
		var ok bool
		if at, ok = rowIndexes(rows, n, key); ok {
			w.WriteByte(1)
		} else {
			w.WriteByte(0)
		}
		prev = -1
	}
	idOf := func(i int, id string) {
		if at == nil {
			str(id)
			return
		}
		uv(uint64(at[i] - prev - 1))
		prev = at[i]
	}
	// Each list: 0 for nil, else 1 + its length (nil and empty differ in the JSON).
	uv(uint64(len(tests)))
	for _, l := range tests {
		if *l == nil {
			uv(0)
			continue
		}
		uv(uint64(len(*l)) + 1)
		list := *l
		howIDs(len(list), func(i int) string { return list[i].ProblemID })
		for i, t := range list {
			idOf(i, t.ProblemID)
			uv(uint64(t.BaseC))
			uv(uint64(t.BaseN))
			uv(uint64(t.OtherC))
			uv(uint64(t.OtherN))
			f64(t.P)
			f64(t.PHolm)
			var flags byte
			if t.CouldBeLuck {
				flags |= 1
			}
			if t.Guessable {
				flags |= 2
			}
			w.WriteByte(flags)
		}
	}
	uv(uint64(len(ids)))
	for _, l := range ids {
		if *l == nil {
			uv(0)
			continue
		}
		uv(uint64(len(*l)) + 1)
		list := *l
		howIDs(len(list), func(i int) string { return list[i] })
		for i, s := range list {
			idOf(i, s)
		}
	}
}

// readLists reads what writeLists wrote; ids stored as row numbers share
// the keys of rows.
func readLists(r *bufio.Reader, rows []ProblemRow) (tests [][]ProblemTest, ids [][]string, err error) {
	uv := func() uint64 {
		if err != nil {
			return 0
		}
		var x uint64
		x, err = binary.ReadUvarint(r)
		return x
	}
	var b8 [8]byte
	f64 := func() float64 {
		if err != nil {
			return 0
		}
		_, err = io.ReadFull(r, b8[:])
		return math.Float64frombits(binary.LittleEndian.Uint64(b8[:]))
	}
	str := func() string {
		l := uv()
		if err == nil && l > maxStoredString {
			err = errRowTable
		}
		if err != nil {
			return ""
		}
		b := make([]byte, l)
		_, err = io.ReadFull(r, b)
		return string(b)
	}
	length := func() (int, bool) {
		n := uv()
		if err == nil && n > maxStoredRows+1 {
			err = errRowTable
		}
		if err != nil || n == 0 {
			return 0, false
		}
		return int(n - 1), true
	}
	fail := func(what string) error {
		if err == nil || errors.Is(err, io.EOF) {
			err = fmt.Errorf("%w (%v)", errRowTable, err)
		}
		return fmt.Errorf("problem lists: %s: %w", what, err)
	}
	// The ids of the list being read: as rows' keys (byRow) or strings.
	byRow, prev := false, -1
	howIDs := func() {
		if err != nil {
			return
		}
		var c byte
		if c, err = r.ReadByte(); err == nil && c > 1 {
			err = errRowTable
		}
		byRow, prev = c == 1, -1
	}
	id := func() string {
		if !byRow {
			return str()
		}
		d := uv()
		if err == nil && d >= uint64(len(rows)-prev-1) {
			err = errRowTable
		}
		if err != nil {
			return ""
		}
		prev += int(d) + 1
		return rows[prev].Key
	}
	nt := uv()
	if err != nil || nt > maxStoredModels*4 {
		return nil, nil, fail("header")
	}
	tests = make([][]ProblemTest, nt)
	for i := range tests {
		n, ok := length()
		if !ok {
			if err != nil {
				return nil, nil, fail("tests")
			}
			continue
		}
		l := make([]ProblemTest, n)
		howIDs()
		for j := range l {
			t := &l[j]
			t.ProblemID = id()
			t.BaseC, t.BaseN, t.OtherC, t.OtherN = int(uv()), int(uv()), int(uv()), int(uv())
			t.P, t.PHolm = f64(), f64()
			var flags byte
			if err == nil {
				flags, err = r.ReadByte()
			}
			t.CouldBeLuck, t.Guessable = flags&1 != 0, flags&2 != 0
		}
		if err != nil {
			return nil, nil, fail("tests")
		}
		tests[i] = l
	}
	ni := uv()
	if err != nil || ni > maxStoredRows {
		return nil, nil, fail("ids header")
	}
	ids = make([][]string, ni)
	for i := range ids {
		n, ok := length()
		if !ok {
			if err != nil {
				return nil, nil, fail("ids")
			}
			continue
		}
		l := make([]string, n)
		howIDs()
		for j := range l {
			l[j] = id()
		}
		if err != nil {
			return nil, nil, fail("ids")
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
