package analysis

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"reflect"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// A stored report reads back as the report it was: the same JSON byte for
// byte and the same problem table (three models, subjects and levels, a
// guessable reference, p-values, nil and empty lists), and a damaged one is
// an error, never a wrong report.
func TestStoredReportRoundTrip(t *testing.T) {
	c, ps, counts, _ := statsBenchData(3, 400, 8)
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	rep.statsHash = "h1"
	guessed, tested := 0, 0
	for _, r := range rep.Rows {
		if r.Guess != nil {
			guessed++
		}
		if r.P[1] >= 0 {
			tested++
		}
	}
	if guessed == 0 || tested == 0 || len(rep.Pairs) != 2 || rep.Support == nil || len(rep.Intersections) < 4 {
		t.Fatalf("the fixture lacks what is tested: %d guessable rows, %d tested, %d pairs, %d intersections", guessed, tested, len(rep.Pairs), len(rep.Intersections))
	}
	rep.Pairs[1].OtherOnly = []string{} // empty, not nil: the JSON says [] rather than null
	// A list out of the table's order (stored as strings) and one naming a
	// problem the table lacks: both read back as they were.
	rev := slices.Clone(rep.Pairs[0].BaseOnly)
	slices.Reverse(rev)
	if len(rev) < 2 {
		t.Fatalf("%d base-only problems", len(rev))
	}
	rep.Pairs[0].BaseOnly = rev
	rep.Intersections[0].Problems = append(slices.Clone(rep.Intersections[0].Problems), "not-a-row")
	var want bytes.Buffer
	if err := rep.WriteJSON(&want); err != nil {
		t.Fatal(err)
	}
	data, err := encodeReport(rep)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeReport(data)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := back.WriteJSON(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want.Bytes(), got.Bytes()) {
		t.Errorf("report JSON differs after a round trip (%d bytes, want %d)", got.Len(), want.Len())
	}
	if !reflect.DeepEqual(back.Rows, rep.Rows) {
		t.Error("problem table differs after a round trip")
	}
	// Every figure the page reads, not only what the JSON shows: a field
	// left out of the JSON (json:"-") read back as 0 on the page.
	if rep.Pairs[0].TaxDiff == nil || rep.Pairs[0].TaxDiff.A == 0 {
		t.Fatalf("the fixture lacks a sharpening tax difference: %+v", rep.Pairs[0].TaxDiff)
	}
	for i := range rep.Pairs {
		if !reflect.DeepEqual(back.Pairs[i], rep.Pairs[i]) {
			t.Errorf("pair %d differs after a round trip:\n%+v\nwant\n%+v", i, back.Pairs[i], rep.Pairs[i])
		}
	}
	if back.statsHash != "h1" || back.Models[2].Counts.Len() != 400 || back.Models[2].Counts.At(7) != rep.Models[2].Counts.At(7) {
		t.Errorf("stats hash %q, counts %d", back.statsHash, back.Models[2].Counts.Len())
	}
	// The original is not changed by storing it (it is shared).
	if rep.Pairs[0].BaseOnlyTests == nil || rep.Intersections[0].Problems == nil {
		t.Error("encodeReport emptied the report's lists")
	}

	// Damaged: the rows cut short, or flipped bytes in the table.
	zr := mustUnzstd(t, data)
	for _, cut := range []int{3, len(zr) / 3, len(zr) - 10} {
		if _, err := decodeReport(mustZstd(t, zr[:cut])); err == nil {
			t.Errorf("a stored report cut at %d of %d bytes decoded", cut, len(zr))
		}
	}
	bad := bytes.Clone(zr)
	bad[1] = 'X'
	if _, err := decodeReport(mustZstd(t, bad)); !errors.Is(err, errRowTable) {
		t.Errorf("a bad header: %v, want errRowTable", err)
	}
}

func mustUnzstd(t *testing.T, data []byte) []byte {
	t.Helper()
	zr, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	out, err := zr.DecodeAll(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustZstd(t *testing.T, data []byte) []byte {
	t.Helper()
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()
	return zw.EncodeAll(data, nil)
}

// ApproxBytes grows with the problem table: each problem more adds what a
// row and its entries in the lists hold (measured at a million problems and
// two models: 260 MB decoded, the estimate says about 300 MB).
func TestApproxBytes(t *testing.T) {
	small, large := approxOf(t, 400), approxOf(t, 4000)
	if per := float64(large-small) / 3600; per < 200 || per > 600 {
		t.Errorf("%.0f bytes a problem estimated for three models (400: %d, 4,000: %d)", per, small, large)
	}
}

func approxOf(t *testing.T, problems int) int64 {
	t.Helper()
	c, ps, counts, _ := statsBenchData(3, problems, 4)
	rep, err := Compute(c, ps, counts)
	if err != nil {
		t.Fatal(err)
	}
	return rep.ApproxBytes()
}

// The codec's varints read back what encoding/binary wrote, at the
// extremes too, and an overlong one is an error.
func TestBinVarints(t *testing.T) {
	us := []uint64{0, 1, 127, 128, 300, 1<<32 - 1, 1 << 63, ^uint64(0)}
	ss := []int64{0, -1, 1, -64, 64, math.MinInt64, math.MaxInt64}
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	w := &binWriter{w: bw}
	for _, u := range us {
		w.uv(u)
	}
	for _, s := range ss {
		w.sv(s)
	}
	bw.Flush()
	r := &binReader{r: bufio.NewReader(bytes.NewReader(buf.Bytes()))}
	for _, u := range us {
		if got := r.uv(); got != u || r.err != nil {
			t.Errorf("uv %d: got %d (%v)", u, got, r.err)
		}
	}
	for _, s := range ss {
		if got := r.sv(); got != s || r.err != nil {
			t.Errorf("sv %d: got %d (%v)", s, got, r.err)
		}
	}
	over := &binReader{r: bufio.NewReader(bytes.NewReader(bytes.Repeat([]byte{0xff}, 11)))}
	if over.uv(); !errors.Is(over.err, errRowTable) {
		t.Errorf("an overlong varint: %v", over.err)
	}
}
