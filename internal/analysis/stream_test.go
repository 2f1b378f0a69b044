package analysis

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/reach-lab/reach/internal/store"
)

// writeCounter counts bytes and remembers the largest single write.
type writeCounter struct{ n, max int }

func (c *writeCounter) Write(b []byte) (int, error) {
	c.n += len(b)
	c.max = max(c.max, len(b))
	return len(b), nil
}

// TestWriteJSONIsEncodingJSON: the streamed report is byte for byte what
// encoding/json writes (the API and `reach report --json` changed encoder,
// not output), and it reaches the writer in pieces, not as one document.
func TestWriteJSONIsEncodingJSON(t *testing.T) {
	rep := math500Report(t)
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := rep.WriteJSON(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		a, b := got.Bytes(), want.Bytes()
		i := 0
		for i < min(len(a), len(b)) && a[i] == b[i] {
			i++
		}
		t.Fatalf("streamed JSON differs at byte %d of %d/%d:\n got %q\nwant %q", i, len(a), len(b),
			a[max(0, i-80):min(len(a), i+80)], b[max(0, i-80):min(len(b), i+80)])
	}
	c := &writeCounter{}
	if err := rep.WriteJSON(c); err != nil {
		t.Fatal(err)
	}
	if c.n != want.Len() || c.max > 64<<10 {
		t.Errorf("%d bytes in writes of at most %d: want %d bytes, no write over 64 KiB", c.n, c.max, want.Len())
	}
	if err := rep.WriteJSON(failingWriter{}); err == nil {
		t.Error("a failing writer: no error")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

// math500Report is the shipped MATH500 pair's report with the biased curves
// and bootstrap intervals attached: most of the report's types filled in.
func math500Report(t *testing.T) *Report {
	t.Helper()
	c, ps, counts := examplePair(t, readCountsCSV(t), "qwen2.5-7b-base.csv", "qwen2.5-7b-simplerl-zoo.csv", "rl")
	rep, err := ComputeWith(c, ps, counts, Options{Biased: true})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ComputeStats(rep, nil, StatsOptions{Draws: 100})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(s)
	rep.AttachStats(store.Stats{Hash: rep.Hash(), Status: StatsReady, Data: data})
	if rep.Stats.Status != StatsReady {
		t.Fatalf("stats not attached: %+v", rep.Stats)
	}
	return rep
}
