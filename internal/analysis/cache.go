package analysis

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/klauspost/compress/zstd"
	"golang.org/x/sync/singleflight"

	"github.com/reach-lab/reach/internal/metrics"
	"github.com/reach-lab/reach/internal/store"
)

// A report is computed once per change of what it is computed from and
// stored (issue 11): pages, the report JSON and chart downloads read it
// from a Cache. The store's report version (store.ReportVersion, moved by
// triggers on counts, quality figures, statistics, runs, comparisons and
// problems) says whether a computed report is current. A Cache keeps recent
// reports decoded in memory, shares one computation among concurrent
// requests, and keeps every computed report in Postgres, so other server
// processes and restarts do not compute it again.

// DefaultCacheEntries is the number of reports a Cache keeps in memory.
const DefaultCacheEntries = 64

// DefaultCacheBytes bounds the memory of the reports a Cache keeps (their
// estimated size, Report.ApproxBytes): a report of a million problems holds
// about 270 MB, and 64 of them would not fit any server. The most recently
// used report is kept whatever its size.
const DefaultCacheBytes = 256 << 20

// Cache serves current reports. Safe for concurrent use.
type Cache struct {
	st       *store.Store
	max      int
	maxBytes int64
	mu       sync.Mutex
	items    map[cacheKey]*Entry
	flight   singleflight.Group
}

type cacheKey struct {
	id      int64
	variant string
}

// NewCache returns a cache of at most entries reports in memory (0 means
// DefaultCacheEntries).
func NewCache(st *store.Store, entries int) *Cache {
	if entries <= 0 {
		entries = DefaultCacheEntries
	}
	return &Cache{st: st, max: entries, maxBytes: DefaultCacheBytes, items: map[cacheKey]*Entry{}}
}

// SetMaxBytes bounds the estimated memory of the reports kept (≤ 0: the
// default). Call it before the cache is used.
func (c *Cache) SetMaxBytes(n int64) {
	if n <= 0 {
		n = DefaultCacheBytes
	}
	c.maxBytes = n
}

// Entry is one computed report. Report and everything reachable from it
// are shared between requests: read them, never change them. Memo keeps
// what callers derive from the report (rendered charts, encoded
// downloads) for as long as the report is current.
type Entry struct {
	Report  *Report
	Version string
	// ID is unique among the entries of this process: what is derived from
	// an entry's report can be cached under it (entries are never changed).
	ID uint64
	// Seconds is how long computing the report took (0 when it was read
	// from Postgres: see Stored).
	Seconds float64
	// Bytes is the report's estimated size in memory (Report.ApproxBytes).
	Bytes  int64
	Stored bool // read from Postgres rather than computed here

	used atomic.Int64 // unix nanoseconds of the last Get
	mu   sync.Mutex
	memo map[string]*memoCell
}

type memoCell struct {
	done chan struct{}
	v    any
	err  error
}

// entryIDs numbers the entries.
var entryIDs atomic.Uint64

// Memo returns what f computes for key, computing it once per entry
// (concurrent callers wait for the first). A failed computation is not
// kept.
func (e *Entry) Memo(key string, f func() (any, error)) (any, error) {
	e.mu.Lock()
	if e.memo == nil {
		e.memo = map[string]*memoCell{}
	}
	c, ok := e.memo[key]
	if !ok {
		c = &memoCell{done: make(chan struct{})}
		e.memo[key] = c
		e.mu.Unlock()
		c.v, c.err = f()
		if c.err != nil {
			e.mu.Lock()
			delete(e.memo, key)
			e.mu.Unlock()
		}
		close(c.done)
		return c.v, c.err
	}
	e.mu.Unlock()
	<-c.done
	return c.v, c.err
}

// Key names the report variant opt selects, for caches: the same key, the
// same report.
func (opt Options) Key() string {
	k := fmt.Sprintf("g%t/b%t/m%d", opt.ExcludeGuessable, opt.Biased, opt.MinN)
	if len(opt.ExcludeProblems) > 0 {
		ids := make([]int64, 0, len(opt.ExcludeProblems))
		for id, ex := range opt.ExcludeProblems {
			if ex {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		h := sha256.New()
		for _, id := range ids {
			fmt.Fprintf(h, "%d,", id)
		}
		k += "/x" + hex.EncodeToString(h.Sum(nil)[:8])
	}
	return k
}

// Get returns the current report of comparison id in the variant opt
// selects: from memory, else from Postgres, else computed (BuildWith) and
// stored. Concurrent calls for the same report share one computation.
// Errors as BuildWith's (ErrNotReady while the comparison is not ready).
func (c *Cache) Get(ctx context.Context, id int64, opt Options) (*Entry, error) {
	version, err := c.st.ReportVersion(ctx, id)
	if err != nil {
		return nil, err
	}
	return c.GetAt(ctx, id, opt, version)
}

// GetAt is Get for a caller that has read the report's current version
// (store.ReportVersion) itself, with its other queries.
func (c *Cache) GetAt(ctx context.Context, id int64, opt Options, version string) (*Entry, error) {
	key := cacheKey{id, opt.Key()}
	c.mu.Lock()
	e := c.items[key]
	c.mu.Unlock()
	if e != nil && e.Version == version {
		e.used.Store(time.Now().UnixNano())
		metrics.ReportLookup("memory")
		return e, nil
	}
	// One computation per report and version; it outlives a caller that
	// gives up, since others may wait for it.
	v, err, _ := c.flight.Do(fmt.Sprintf("%d|%s|%s", id, key.variant, version), func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
		defer cancel()
		return c.load(lctx, id, opt, key, version)
	})
	if err != nil {
		return nil, err
	}
	e = v.(*Entry)
	// Callers that shared one computation each count it: each waited for it.
	if e.Stored {
		metrics.ReportLookup("stored")
	} else {
		metrics.ReportLookup("computed")
	}
	return e, nil
}

func (c *Cache) load(ctx context.Context, id int64, opt Options, key cacheKey, version string) (*Entry, error) {
	c.makeRoom(key)
	e := &Entry{Version: version, ID: entryIDs.Add(1)}
	stored, err := c.st.GetReport(ctx, id, key.variant)
	switch {
	case err == nil && stored.Version == version:
		rep, derr := decodeReport(stored.Data)
		if derr == nil {
			e.Report, e.Stored = rep, true
			break
		}
		// An older encoding: compute it again below.
		fallthrough
	case err == nil || errors.Is(err, store.ErrNotFound):
		start := time.Now()
		rep, err := BuildWith(ctx, c.st, id, opt)
		if err != nil {
			return nil, err
		}
		e.Report, e.Seconds = rep, time.Since(start).Seconds()
		metrics.ReportComputed(time.Since(start))
		data, err := encodeReport(rep)
		if err != nil {
			return nil, err
		}
		if err := c.st.PutReport(ctx, id, key.variant, store.StoredReport{Version: version, Data: data, Seconds: e.Seconds}); err != nil {
			return nil, err
		}
	default:
		return nil, err
	}
	e.used.Store(time.Now().UnixNano())
	e.Bytes = e.Report.ApproxBytes()
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.items[key]; old == nil || old.Version != version {
		c.items[key] = e
	}
	over := func() bool {
		if len(c.items) > c.max {
			return true
		}
		var total int64
		for _, it := range c.items {
			total += it.Bytes
		}
		return total > c.maxBytes && len(c.items) > 1
	}
	for over() {
		var oldest cacheKey
		first := true
		for k, it := range c.items {
			if k == key {
				continue // the report just asked for stays
			}
			if first || it.used.Load() < c.items[oldest].used.Load() {
				oldest, first = k, false
			}
		}
		if first {
			break
		}
		delete(c.items, oldest)
	}
	return c.items[key], nil
}

// makeRoom drops the least recently used reports before one of key's
// comparison is read, until the cache holds at most its byte bound with
// another report as large as the largest of that comparison's: otherwise
// the old reports and the new one are all in memory while it is decoded
// (a million problems: 250 MB each, 976 MB for four views in a row).
func (c *Cache) makeRoom(key cacheKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var need, total int64
	for k, it := range c.items {
		total += it.Bytes
		if k.id == key.id {
			need = max(need, it.Bytes)
		}
	}
	for total+need > c.maxBytes && len(c.items) > 0 {
		var oldest cacheKey
		first := true
		for k, it := range c.items {
			if first || it.used.Load() < c.items[oldest].used.Load() {
				oldest, first = k, false
			}
		}
		total -= c.items[oldest].Bytes
		delete(c.items, oldest)
	}
}

// Precompute computes and stores the report variants opts (the default
// report when none is given: what a comparison's page shows first) whose
// stored report is not current, so that the first page view after a change
// finds them ready instead of computing them in the request. The statistics
// job calls it once the statistics are stored, with the views the page
// links to. A comparison or variant that is not ready or has no figures is
// no error: there is nothing to store, and the page says why.
func Precompute(ctx context.Context, st *store.Store, id int64, opts ...Options) error {
	if len(opts) == 0 {
		opts = []Options{{}}
	}
	for _, opt := range opts {
		version, err := st.ReportVersion(ctx, id)
		if err != nil {
			return err
		}
		key := opt.Key()
		if stored, err := st.GetReport(ctx, id, key); err == nil && stored.Version == version {
			continue
		}
		start := time.Now()
		rep, err := BuildWith(ctx, st, id, opt)
		if errors.Is(err, ErrNotReady) || errors.Is(err, ErrNoData) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("precompute report %d (%s): %w", id, key, err)
		}
		data, err := encodeReport(rep)
		if err != nil {
			return err
		}
		if err := st.PutReport(ctx, id, key, store.StoredReport{Version: version, Data: data, Seconds: time.Since(start).Seconds()}); err != nil {
			return err
		}
	}
	return nil
}

// storedReport is a report's JSON without its problem table (models[].counts
// are written as null: they are read from the table), and what the JSON
// leaves out. The table comes first in the same zstd stream, in the binary
// form of rowcodec.go.
type storedReport struct {
	Version   int     `json:"v"`
	Report    *Report `json:"report"`
	StatsHash string  `json:"stats_hash"`
}

// reportEncoding changes whenever Report's fields change meaning, so that
// older stored reports are computed again.
const reportEncoding = 12 // 2: CoT-pass@k, perplexity, answer diversity, support; 3: trajectory flows, sharpening tax; 4: G-Pass@k; 5: k_sampled, curves past it (adaptive designs); 6: models[].cost; 7: past_n (curves continued to 4n); 8: trajectory at_k, dynamics_at_k; 9: the problem table and per-problem lists in binary ahead of the JSON; 10: G-Pass@k intervals, temperature_sweep; 11: the sharpening tax difference's figures (were left out of the JSON, so a stored report read them back as 0); 12: the breakdowns' crossover found on every k (was on powers of two)

// encodeReport writes the problem table, then streams the rest as JSON
// with go-json-experiment under v1 options (encoding/json's output), all
// through zstd: nothing of a million problems is held twice.
func encodeReport(rep *Report) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("encode report %d: %w", rep.ComparisonID, err)
	}
	bw := bufio.NewWriterSize(zw, 64<<10)
	if err := writeRows(bw, rep.Rows); err != nil {
		zw.Close()
		return nil, fmt.Errorf("encode report %d: %w", rep.ComparisonID, err)
	}
	tests, ids := rep.bulkyLists()
	writeLists(bw, rep.Rows, tests, ids)
	sr := storedReport{Version: reportEncoding, Report: rep.withoutBulkyLists(), StatsHash: rep.statsHash}
	noCounts := jsonv2.WithMarshalers(jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, _ ProblemCounts) error {
		return enc.WriteToken(jsontext.Null)
	}))
	if err := jsonv2.MarshalWrite(bw, &sr, jsonv1.DefaultOptionsV1(), noCounts); err != nil {
		zw.Close()
		return nil, fmt.Errorf("encode report %d: %w", rep.ComparisonID, err)
	}
	if err := bw.Flush(); err != nil {
		zw.Close()
		return nil, fmt.Errorf("encode report %d: %w", rep.ComparisonID, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("encode report %d: %w", rep.ComparisonID, err)
	}
	return buf.Bytes(), nil
}

// decodeReport reads what encodeReport wrote. A report stored by an
// older encoding (or not a report) is an error: the caller computes it
// again.
func decodeReport(data []byte) (*Report, error) {
	zr, err := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("decode report: %w", err)
	}
	defer zr.Close()
	br := bufio.NewReaderSize(zr, 64<<10)
	rows, err := readRows(br)
	if err != nil {
		return nil, fmt.Errorf("decode report: %w", err)
	}
	tests, ids, err := readLists(br, rows)
	if err != nil {
		return nil, fmt.Errorf("decode report: %w", err)
	}
	var sr storedReport
	if err := jsonv2.UnmarshalRead(br, &sr, jsonv1.DefaultOptionsV1()); err != nil {
		return nil, fmt.Errorf("decode report: %w", err)
	}
	if sr.Version != reportEncoding || sr.Report == nil {
		return nil, fmt.Errorf("decode report: encoding %d, want %d", sr.Version, reportEncoding)
	}
	rep := sr.Report
	if err := rep.attachLists(tests, ids); err != nil {
		return nil, fmt.Errorf("decode report: %w", err)
	}
	rep.Rows = rows
	rep.linkCounts()
	rep.statsHash = sr.StatsHash
	return rep, nil
}
