package store_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// searchFixture is a ready comparison of two runs × 40 problems × 20
// samples whose texts all say "The answer is <problem>." and a few of
// which hold the odd strings the search must find literally.
func searchFixture(t *testing.T, st *store.Store) (runs, pids []int64, counts [][]int) {
	t.Helper()
	ctx := context.Background()
	pid, err := st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	did, err := st.CreateDataset(ctx, "search", "search.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var ps []store.Problem
	for i := range 40 {
		ps = append(ps, store.Problem{Idx: i, Key: fmt.Sprintf("p%d", i), Statement: "s", Reference: "1"})
	}
	if err := st.InsertProblems(ctx, did, ps); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishDataset(ctx, did); err != nil {
		t.Fatal(err)
	}
	cid, err := st.CreateComparison(ctx, store.NewComparison{Name: "search", DatasetID: did, Status: store.StatusReady, ProjectID: pid,
		Runs: []store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.GetComparison(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := st.Problems(ctx, did, false)
	if err != nil {
		t.Fatal(err)
	}
	planted := map[[3]int]string{
		{3, 0, 17}:  "100% of a_b cases",
		{5, 1, 19}:  "Ünïcödé ÄB, then 重新考虑",
		{7, 0, 0}:   "tab\there\nnewline",
		{9, 1, 4}:   "a ᐁ letter",
		{11, 0, 19}: "so the ANSWER 17 it is",
		{13, 1, 5}:  "since x≤2",
		{2, 0, 9}:   "50%_off",
		{15, 0, 3}:  "axᐟyb",
		{17, 1, 2}:  "cx yd",
	}
	var batch []store.Sample
	for i, p := range stored {
		pids = append(pids, p.ID)
		counts = append(counts, []int{20, 20})
		for r, run := range c.Runs {
			for j := range 20 {
				text := fmt.Sprintf("Let us see. Check: %d \\cdot %d = %d. The answer is %d.", j+2, i+3, (j+2)*(i+3), i)
				if extra, ok := planted[[3]int{i, r, j}]; ok {
					text += " " + extra
				}
				batch = append(batch, store.Sample{RunID: run.ID, ProblemID: p.ID, SampleIndex: j, Completion: text, Status: store.SampleIncorrect})
			}
		}
	}
	if err := st.InsertSamples(ctx, batch); err != nil {
		t.Fatal(err)
	}
	return []int64{c.Runs[0].ID, c.Runs[1].ID}, pids, counts
}

// scanFor is the definition: the problems with a completion ILIKE the
// escaped query, every sample read.
func scanFor(t *testing.T, st *store.Store, runs []int64, q string) map[int64]bool {
	t.Helper()
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(q)
	rows, err := st.Pool().Query(context.Background(), `SELECT DISTINCT problem_id FROM samples WHERE run_id = ANY($1) AND completion ILIKE $2`,
		runs, "%"+esc+"%")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out[id] = true
	}
	return out
}

var searchQueries = []string{
	"answer",                        // in every text
	"ANSWER 17",                     // common words, one text
	"the answer is 3.",              // punctuation, one problem
	"\\cdot 5 = 1",                  // backslash, a few
	"17",                            // no trigrams, many
	"重新",                            // no trigrams, one text
	"100%", "a_b", "_", "%", "50%_", // LIKE's wildcards, literally
	"ünïcödé äb", // case-insensitive beyond ASCII
	"ᐁ",          // a letter of the block of the one reach_search_text puts for a space
	"x y", "xᐟy", // a space, and the letter reach_search_text puts for it
	"tab\there\nnew", // white space
	"x≤2",            // a non-ASCII symbol
	"zzzqqq",         // nowhere
}

// Issue 28, item 3: SearchTexts finds exactly the problems a scan of every
// sample finds, with and without the search index, for common words, rare
// strings, queries without trigrams and LIKE's wildcards; the budget
// leaves problems undecided, never wrongly decided.
func TestSearchTexts(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	runs, pids, counts := searchFixture(t, st)
	search := func(indexed map[int64]bool, q string, budget int, ps []int64, cs [][]int) store.TextSearchResult {
		t.Helper()
		res, err := st.SearchTexts(ctx, store.TextSearch{Runs: runs, Indexed: indexed, Problems: ps, Counts: cs, Text: q, Budget: budget})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	check := func(name, q string, res store.TextSearchResult, want map[int64]bool, ps []int64, complete bool) {
		t.Helper()
		for _, p := range ps {
			if res.Decided[p] && res.Hits[p] != want[p] {
				t.Errorf("%s %q: problem %d decided %v, want %v", name, q, p, res.Hits[p], want[p])
			}
			if complete && !res.Decided[p] {
				t.Errorf("%s %q: problem %d undecided", name, q, p)
			}
		}
		for p := range res.Hits {
			if !res.Decided[p] {
				t.Errorf("%s %q: hit %d not decided", name, q, p)
			}
		}
	}
	wants := map[string]map[int64]bool{}
	for _, q := range searchQueries {
		wants[q] = scanFor(t, st, runs, q)
		t.Logf("%q: %d problems", q, len(wants[q]))
	}
	if len(wants["answer"]) != 40 || len(wants["ANSWER 17"]) != 1 || len(wants["a_b"]) != 1 || len(wants["_"]) != 2 ||
		len(wants["ünïcödé äb"]) != 1 || len(wants["zzzqqq"]) != 0 || len(wants["17"]) < 5 ||
		len(wants["x y"]) != 1 || len(wants["xᐟy"]) != 1 {
		t.Fatalf("the fixture does not hold what the test needs: %v", wants)
	}

	// No index: read, complete within a large budget, partial within a
	// small one (the problems it did decide, right).
	for _, q := range searchQueries {
		res := search(nil, q, 1_000_000, pids, counts)
		check("no index", q, res, wants[q], pids, true)
		if res.Indexed {
			t.Errorf("%q: indexed without an index", q)
		}
		small := search(nil, q, 100, pids, counts)
		check("no index, budget 100", q, small, wants[q], pids, false)
		if small.Read > 100 {
			t.Errorf("%q: %d samples read over a budget of 100", q, small.Read)
		}
	}
	if res := search(nil, "zzzqqq", 100, pids, counts); len(res.Decided) == len(pids) {
		t.Errorf("a query found nowhere decided every problem within a budget of 100 of 1,600 samples")
	}
	// A word in every text is confirmed by each problem's first sample.
	if res := search(nil, "answer", 100, pids, counts); len(res.Decided) != 40 || res.Read > 40 {
		t.Errorf("answer: %d problems decided, %d samples read; want 40 and 40", len(res.Decided), res.Read)
	}

	// With the indexes: every problem decided for queries of trigrams,
	// whatever the budget; a query without trigrams still reads.
	for _, r := range runs {
		if _, err := st.BuildSearchIndex(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	ready, err := st.SearchIndexedRuns(ctx, runs)
	if err != nil || len(ready) != 2 {
		t.Fatalf("indexed runs %v, %v", ready, err)
	}
	var ws []store.Windows
	for _, r := range runs {
		texts, err := st.SearchSampleTexts(ctx, r, 16)
		if err != nil || len(texts) != 16 {
			t.Fatalf("%d sample texts, %v", len(texts), err)
		}
		ws = append(ws, store.CountWindows(texts))
	}
	for _, q := range searchQueries {
		trig := store.Trigrammable(q)
		// The index asked for the query's rarest windows, then checked.
		wres, err := st.SearchTexts(ctx, store.TextSearch{Runs: runs, Indexed: ready, Problems: pids, Counts: counts, Text: q, Windows: ws})
		if err != nil {
			t.Fatal(err)
		}
		check("indexed, rarest windows", q, wres, wants[q], pids, trig)
		res := search(ready, q, 0, pids, counts)
		check("indexed", q, res, wants[q], pids, trig)
		if trig && q != "answer" && !res.Indexed {
			t.Errorf("%q: not through the index", q)
		}
		// A page of problems only: the same answers for them.
		sub := search(ready, q, 0, pids[10:15], counts[10:15])
		check("indexed, 5 problems", q, sub, wants[q], pids[10:15], trig)
		for p := range sub.Decided {
			if !(p >= pids[10] && p <= pids[14]) {
				t.Errorf("%q: problem %d decided, not asked", q, p)
			}
		}
	}
	// A query too common for the index (its windows in most texts) is
	// read within the budget, run by run, and says so; a rare one still
	// goes through the index whatever the bound.
	common := "the answer is 1"
	want := scanFor(t, st, runs, common)
	cres, err := st.SearchTexts(ctx, store.TextSearch{Runs: runs, Indexed: ready, Problems: pids, Counts: counts, Text: common,
		Windows: ws, MaxCandidates: 100, Budget: 100})
	if err != nil {
		t.Fatal(err)
	}
	check("too common", common, cres, want, pids, false)
	if !cres.Common || cres.Indexed || cres.Read > 100 || len(cres.Decided) == len(pids) || cres.Candidates <= 100 {
		t.Errorf("%q with at most 100 candidates: common %v, indexed %v, %d read, %d of %d decided, %d candidates estimated",
			common, cres.Common, cres.Indexed, cres.Read, len(cres.Decided), len(pids), cres.Candidates)
	}
	for p := range want {
		if !cres.Hits[p] {
			t.Errorf("%q: problem %d (every sample has it) not found in the first samples", common, p)
		}
	}
	for _, q := range []string{"ANSWER 17", "ünïcödé äb"} {
		res, err := st.SearchTexts(ctx, store.TextSearch{Runs: runs, Indexed: ready, Problems: pids, Counts: counts, Text: q,
			Windows: ws, MaxCandidates: 100, Budget: 100})
		if err != nil {
			t.Fatal(err)
		}
		check("rare, bounded candidates", q, res, wants[q], pids, true)
		if res.Common || !res.Indexed {
			t.Errorf("%q with at most 100 candidates: common %v, indexed %v", q, res.Common, res.Indexed)
		}
	}

	for q, trig := range map[string]bool{"answer": true, "is 2": true, "a_b": false, "\\cdot": true, "ᐟᐟᐟ": true, "17": false, "重新": false, "x≤": false, "a≤b": false} {
		if store.Trigrammable(q) != trig {
			t.Errorf("Trigrammable(%q) = %v", q, !trig)
		}
	}
	if res := search(ready, "answer", 0, pids, counts); len(res.Decided) != 40 || res.Read > 80 {
		t.Errorf("answer, indexed: %d problems decided, %d samples read; want 40 and at most 80", len(res.Decided), res.Read)
	}

	// (That the planner reads the indexes is checked on a real import,
	// whose samples outnumber these: jobs' TestSearchIndexAfterImport.)
	// The old form's indexes go.
	if _, err := st.Pool().Exec(ctx, fmt.Sprintf(`CREATE INDEX samples_trgm_run_%d ON %s USING gin (completion gin_trgm_ops)`, runs[0], store.SamplePartition(runs[0]))); err != nil {
		t.Fatal(err)
	}
	if n, err := st.DropOrphanSearchIndexes(ctx); err != nil || n != 1 {
		t.Errorf("dropped %d indexes (%v); want the old one", n, err)
	}
	if ready, err := st.SearchIndexedRuns(ctx, runs); err != nil || !maps.Equal(ready, map[int64]bool{runs[0]: true, runs[1]: true}) {
		t.Errorf("after dropping the old index: ready %v, %v", ready, err)
	}
}
