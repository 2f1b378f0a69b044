package jobs_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/testdb"
)

// Issue 9, case 8: with no server running, `reach import --wait` waits for
// everything the report needs and `reach report --json` shows computed
// statistics (not "computing" forever); on a comparison no worker is
// working, `report --json` prints a JSON status with what to do, and exits
// non-zero.
func TestCLIReportWithoutServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildReach(t)
	_, dbURL := testdb.New(t)
	dir := repoCase(t, "from-reports/truncated-length")
	run := func(args ...string) ([]byte, error) {
		cmd := exec.Command(bin, append(args, "--database-url", dbURL)...)
		cmd.Env = append(os.Environ(), "REACH_LOG_LEVEL=error")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			err = errors.Join(err, errors.New(stderr.String()))
		}
		return out, err
	}
	importArgs := func(name string) []string {
		return []string{"import", "--name", name, "--dataset", filepath.Join(dir, "dataset.jsonl"),
			"--base", "base=" + filepath.Join(dir, "base.jsonl"), "--model", "rl=" + filepath.Join(dir, "rl.jsonl")}
	}
	out, err := run(append(importArgs("waited"), "--wait")...)
	if err != nil {
		t.Fatalf("reach import --wait: %v", err)
	}
	id := strings.TrimSpace(string(out))
	if _, err := strconv.Atoi(id); err != nil {
		t.Fatalf("reach import printed %q", out)
	}
	out, err = run("report", id, "--json")
	if err != nil {
		t.Fatalf("reach report: %v", err)
	}
	var rep struct {
		Status string `json:"status"`
		Stats  struct {
			Status string `json:"status"`
		} `json:"stats"`
		Models []struct {
			Name    string  `json:"name"`
			PassAt1 float64 `json:"pass_at_1"`
		} `json:"models"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report JSON: %v\n%s", err, out)
	}
	if rep.Stats.Status != "ready" {
		t.Errorf("stats %q after import --wait; want ready", rep.Stats.Status)
	}
	if len(rep.Models) != 2 || rep.Models[0].PassAt1 != 0.25 {
		t.Errorf("models %+v; want base pass@1 0.25 under the strict policy", rep.Models)
	}

	// The page's views from the command line: the biased estimator's
	// curves are added; a min n out of range is refused in words.
	out, err = run("report", id, "--biased", "--json")
	if err != nil || !strings.Contains(string(out), `"pass_at_k_biased"`) {
		t.Errorf("reach report --biased --json: %v, biased curves %v", err, strings.Contains(string(out), `"pass_at_k_biased"`))
	}
	if _, err := run("report", id, "--min-n", "1"); err == nil || !strings.Contains(err.Error(), "--min-n 1: want 2 to 10000000") {
		t.Errorf("reach report --min-n 1: %v", err)
	}

	// Enqueued only: no worker runs, so the report is not there.
	out, err = run(importArgs("queued")...)
	if err != nil {
		t.Fatalf("reach import: %v", err)
	}
	queued := strings.TrimSpace(string(out))
	out, err = run("report", queued, "--json")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Errorf("reach report on an unfinished comparison: err %v; want a non-zero exit", err)
	}
	var status struct {
		Status string `json:"status"`
		Hint   string `json:"hint"`
	}
	if err := json.Unmarshal(out, &status); err != nil || status.Status == "" || status.Status == "ready" || !strings.Contains(status.Hint, "--wait") {
		t.Errorf("status JSON %s (%v); want an unfinished status and a hint naming --wait", out, err)
	}
}

// `reach report` prints names from uploaded files to a terminal: their
// control characters (ESC sequences clear the screen or set the title) and
// bidi overrides come out as markers, never raw.
func TestCLIReportShowsControlCharacters(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildReach(t)
	_, dbURL := testdb.New(t)
	dir := repoCase(t, "from-reports/truncated-length")
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, append(args, "--database-url", dbURL)...)
		cmd.Env = append(os.Environ(), "REACH_LOG_LEVEL=error")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			err = errors.Join(err, errors.New(stderr.String()))
		}
		return string(out), err
	}
	out, err := run("import", "--name", "pair\x1b[2J", "--dataset", filepath.Join(dir, "dataset.jsonl"),
		"--base", "base="+filepath.Join(dir, "base.jsonl"), "--model", "rl\u202Egnp.exe\x1b]0;owned\a="+filepath.Join(dir, "rl.jsonl"), "--wait")
	if err != nil {
		t.Fatalf("reach import --wait: %v", err)
	}
	out, err = run("report", strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("reach report: %v", err)
	}
	if strings.ContainsAny(out, "\x1b\a\u202E") {
		t.Errorf("report prints raw control or bidi characters:\n%q", out)
	}
	for _, want := range []string{"pair⟨U+001B⟩[2J", "rl⟨U+202E⟩gnp.exe⟨U+001B⟩]0;owned⟨U+0007⟩"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
