package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// tiny builds a ready comparison: problems p0, p1; base solves p0 once in
// three samples, the other model solves p1 three times.
func tiny(t *testing.T, st *store.Store, projectID int64) (cid int64, runs []store.Run, pids []int64) {
	t.Helper()
	ctx := context.Background()
	did, err := st.CreateDataset(ctx, "tiny", "tiny.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.InsertProblems(ctx, did, []store.Problem{{Idx: 0, Key: "p0", Statement: "1+1", Reference: "2"},
		{Idx: 1, Key: "p1", Statement: "1+2", Reference: "3"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishDataset(ctx, did); err != nil {
		t.Fatal(err)
	}
	cid, err = st.CreateComparison(ctx, store.NewComparison{Name: "tiny", DatasetID: did, Status: store.StatusReady, ProjectID: projectID,
		Runs: []store.NewRun{{ModelName: "base", Role: "base"}, {ModelName: "rl", Role: "rl"}}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.GetComparison(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := st.Problems(ctx, did, false)
	if err != nil {
		t.Fatal(err)
	}
	pids = []int64{ps[0].ID, ps[1].ID}
	var batch []store.Sample
	for i := range 3 {
		b0, r1 := store.SampleIncorrect, store.SampleCorrect
		if i == 0 {
			b0 = store.SampleCorrect
		}
		batch = append(batch,
			store.Sample{RunID: c.Runs[0].ID, ProblemID: pids[0], SampleIndex: i, Completion: "x", Status: b0},
			store.Sample{RunID: c.Runs[0].ID, ProblemID: pids[1], SampleIndex: i, Completion: "x", Status: store.SampleIncorrect},
			store.Sample{RunID: c.Runs[1].ID, ProblemID: pids[0], SampleIndex: i, Completion: "x", Status: store.SampleIncorrect},
			store.Sample{RunID: c.Runs[1].ID, ProblemID: pids[1], SampleIndex: i, Completion: "x", Status: r1})
	}
	if err := st.InsertSamples(ctx, batch); err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Runs {
		if err := st.AggregateRun(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	return cid, c.Runs, pids
}

func cOf(t *testing.T, st *store.Store, cid, runID, pid int64) int {
	t.Helper()
	counts, err := st.CountsForComparison(context.Background(), cid)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range counts[runID] {
		if x.ProblemID == pid {
			return x.C
		}
	}
	t.Fatalf("no count for run %d problem %d", runID, pid)
	return -1
}

func TestAccountsAndAccess(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	def, err := st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := st.CreateUser(ctx, " Admin@Lab.org ", "h", true, true)
	if err != nil {
		t.Fatal(err)
	}
	if admin.Email != "admin@lab.org" || !admin.MustChangePassword {
		t.Errorf("admin %+v: want normalised email and a one-time password", admin)
	}
	if _, err := st.CreateUser(ctx, "ADMIN@lab.org", "h", false, false); !errors.Is(err, store.ErrExists) {
		t.Errorf("duplicate email: %v, want ErrExists", err)
	}
	if _, err := st.CreateFirstAdmin(ctx, "x@lab.org", "h"); !errors.Is(err, store.ErrHasUsers) {
		t.Errorf("first-run admin on an instance with users: %v, want ErrHasUsers", err)
	}
	if rl, _ := st.RoleIn(ctx, def, admin.ID); rl != "owner" {
		t.Errorf("first admin's role in the default project %q, want owner", rl)
	}
	viewer, _ := st.CreateUser(ctx, "viewer@lab.org", "h", false, false)
	outsider, _ := st.CreateUser(ctx, "outsider@lab.org", "h", false, false)
	if err := st.SetMember(ctx, def, viewer.ID, "viewer"); err != nil {
		t.Fatal(err)
	}
	other, err := st.CreateProject(ctx, "other", outsider.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnsureProject(ctx, "other", admin.ID); err != nil {
		t.Fatal(err)
	}
	cid, _, _ := tiny(t, st, 0)
	cid2, _, _ := tiny(t, st, other)
	for _, c := range []struct {
		user    int64
		all     bool
		want    []int64
		roleCid string
	}{{viewer.ID, false, []int64{cid}, "viewer"}, {outsider.ID, false, []int64{cid2}, ""}, {admin.ID, true, []int64{cid2, cid}, "owner"}} {
		cs, err := st.ListComparisonsFor(ctx, c.user, c.all)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, x := range cs {
			got = append(got, x.ID)
		}
		if len(got) != len(c.want) || got[0] != c.want[0] {
			t.Errorf("user %d sees %v, want %v", c.user, got, c.want)
		}
		if _, rl, err := st.ComparisonRole(ctx, cid, c.user); err != nil || rl != c.roleCid {
			t.Errorf("user %d role on comparison %d: %q (%v), want %q", c.user, cid, rl, err, c.roleCid)
		}
	}
	if _, _, err := st.ComparisonRole(ctx, 99999, admin.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown comparison: %v", err)
	}

	// Sessions: a live one works, an expired one does not, a password change ends the others.
	for i, h := range [][]byte{[]byte("s1"), []byte("s2"), []byte("s3")} {
		exp := time.Now().Add(time.Hour)
		if i == 2 {
			exp = time.Now().Add(-time.Second)
		}
		if err := st.CreateSession(ctx, h, viewer.ID, exp); err != nil {
			t.Fatal(err)
		}
	}
	if u, err := st.SessionUser(ctx, []byte("s1"), time.Hour, 2*time.Hour); err != nil || u.ID != viewer.ID {
		t.Errorf("live session: %v %v", u.ID, err)
	}
	if _, err := st.SessionUser(ctx, []byte("s3"), time.Hour, 2*time.Hour); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("expired session: %v, want ErrNotFound", err)
	}
	if err := st.SetPassword(ctx, viewer.ID, "h2", false, []byte("s1")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SessionUser(ctx, []byte("s2"), time.Hour, 2*time.Hour); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("other session after password change: %v, want ended", err)
	}
	if _, err := st.SessionUser(ctx, []byte("s1"), time.Hour, 2*time.Hour); err != nil {
		t.Errorf("the changing session after password change: %v", err)
	}

	// API tokens: revocable by their owner only.
	tid, err := st.CreateAPIToken(ctx, viewer.ID, "ci", "reach_abcd", []byte("tok"))
	if err != nil {
		t.Fatal(err)
	}
	if u, err := st.APITokenUser(ctx, []byte("tok")); err != nil || u.ID != viewer.ID {
		t.Errorf("token user %d (%v)", u.ID, err)
	}
	if err := st.RevokeAPIToken(ctx, outsider.ID, tid); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoking another user's token: %v, want ErrNotFound", err)
	}
	if err := st.RevokeAPIToken(ctx, viewer.ID, tid); err != nil {
		t.Fatal(err)
	}
	if _, err := st.APITokenUser(ctx, []byte("tok")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoked token: %v, want ErrNotFound", err)
	}
	ts, _ := st.ListAPITokens(ctx, viewer.ID)
	if len(ts) != 1 || ts[0].LastUsedAt == nil || ts[0].RevokedAt == nil {
		t.Errorf("token list %+v: want one used, revoked token", ts)
	}

	// Invitations work once.
	if err := st.CreateInvite(ctx, []byte("inv"), store.Invite{Email: "new@lab.org", ProjectID: &other, Role: "editor",
		CreatedBy: admin.ID, ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	nu, err := st.AcceptInvite(ctx, []byte("inv"), "h")
	if err != nil {
		t.Fatal(err)
	}
	if rl, _ := st.RoleIn(ctx, other, nu.ID); rl != "editor" {
		t.Errorf("invited user's role %q, want editor", rl)
	}
	if _, err := st.AcceptInvite(ctx, []byte("inv"), "h"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second use of an invitation: %v, want ErrNotFound", err)
	}
}

func TestSharesReviewsAndOverrides(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	u, _ := st.CreateUser(ctx, "r@lab.org", "h", true, false)
	cid, runs, pids := tiny(t, st, 0)

	past := time.Now().Add(-time.Minute)
	future := time.Now().Add(time.Hour)
	if _, err := st.CreateShare(ctx, store.ShareLink{ComparisonID: cid, ExpiresAt: &past, CreatedBy: u.ID}, []byte("old")); err != nil {
		t.Fatal(err)
	}
	sid, err := st.CreateShare(ctx, store.ShareLink{ComparisonID: cid, ExpiresAt: &future, Chart: "crossover", CreatedBy: u.ID}, []byte("live"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.OpenShare(ctx, []byte("old"), true); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("expired share: %v, want ErrNotFound", err)
	}
	for range 2 {
		if _, err := st.OpenShare(ctx, []byte("live"), true); err != nil {
			t.Fatal(err)
		}
	}
	l, err := st.OpenShare(ctx, []byte("live"), false)
	if err != nil || l.Views != 2 || l.Chart != "crossover" || l.CreatedByEm != "r@lab.org" {
		t.Errorf("share %+v (%v): want 2 views of the crossover by r@lab.org", l, err)
	}
	if err := st.RevokeShare(ctx, sid); err != nil {
		t.Fatal(err)
	}
	if _, err := st.OpenShare(ctx, []byte("live"), true); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("revoked share: %v, want ErrNotFound", err)
	}

	// Reviews: the second verdict replaces the first; the audit log has both.
	for _, v := range []string{store.VerdictLucky, store.VerdictVerifierFP} {
		if err := st.SetReview(ctx, store.Review{ComparisonID: cid, ProblemID: pids[0], Verdict: v, Note: "n-" + v, ReviewerID: u.ID}); err != nil {
			t.Fatal(err)
		}
	}
	byPair, err := st.Reviews(ctx, cid)
	rs := byPair.Of(runs[1].ID) // 0 in SetReview: against the first other model
	if err != nil || len(byPair) != 1 || rs[pids[0]].Verdict != store.VerdictVerifierFP || rs[pids[0]].ReviewerEmail != "r@lab.org" {
		t.Errorf("reviews %+v (%v)", byPair, err)
	}

	// Overriding the base model's only correct sample on p0 makes c = 0 at once.
	base := runs[0].ID
	if c := cOf(t, st, cid, base, pids[0]); c != 1 {
		t.Fatalf("base c on p0 = %d before, want 1", c)
	}
	old, err := st.OverrideSample(ctx, store.SampleOverride{ComparisonID: cid, RunID: base, ProblemID: pids[0], SampleIndex: 0,
		Status: store.SampleIncorrect, UserID: u.ID, Note: "wrong unit"})
	if err != nil || old != store.SampleCorrect {
		t.Fatalf("override: old %q, %v", old, err)
	}
	if c := cOf(t, st, cid, base, pids[0]); c != 0 {
		t.Errorf("base c on p0 = %d after the override, want 0", c)
	}
	ss, _ := st.SamplesForProblem(ctx, base, pids[0], 10)
	var s0 store.Sample
	for _, s := range ss {
		if s.SampleIndex == 0 {
			s0 = s
		}
	}
	if s0.Status != store.SampleIncorrect || s0.Override == nil || s0.Override.From != store.SampleCorrect || s0.Override.By != "r@lab.org" || s0.Override.Note != "wrong unit" {
		t.Errorf("overridden sample %+v / %+v", s0, s0.Override)
	}
	// Re-verification (every sample) skips the reviewer's verdict.
	all, err := st.PendingSamples(ctx, base, 0, -1, 100, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 {
		t.Errorf("%d samples to re-verify, want 5 (the overridden one keeps its verdict)", len(all))
	}
	for _, x := range all {
		if x.ProblemID == pids[0] && x.SampleIndex == 0 {
			t.Error("the overridden sample is re-verified")
		}
	}
	// Setting the original verdict back clears the override.
	if _, err := st.OverrideSample(ctx, store.SampleOverride{ComparisonID: cid, RunID: base, ProblemID: pids[0], SampleIndex: 0,
		Status: store.SampleCorrect, UserID: u.ID}); err != nil {
		t.Fatal(err)
	}
	ss, _ = st.SamplesForProblem(ctx, base, pids[0], 1)
	if ss[0].SampleIndex != 0 || ss[0].Override != nil || ss[0].Status != store.SampleCorrect {
		t.Errorf("after setting it back: %+v", ss[0])
	}
	if _, err := st.OverrideSample(ctx, store.SampleOverride{RunID: base, ProblemID: pids[0], SampleIndex: 77, Status: store.SampleCorrect}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown sample: %v", err)
	}
	es, err := st.Audit(ctx, cid, pids[0])
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Action+":"+e.Old+">"+e.New)
	}
	want := []string{"sample-verdict:incorrect>correct", "sample-verdict:correct>incorrect", "review:lucky>verifier-fp", "review:>lucky"}
	if len(got) != len(want) {
		t.Fatalf("audit %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("audit[%d] %q, want %q", i, got[i], want[i])
		}
	}
}

// CreateSSOUser makes a passwordless account with the role in the default
// project, lower-cases the email, and refuses a taken one with ErrExists
// (leaving no second membership behind).
func TestCreateSSOUser(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	u, err := st.CreateSSOUser(ctx, "Ann@Lab.test", "editor")
	if err != nil {
		t.Fatal(err)
	}
	if u.Email != "ann@lab.test" || u.PasswordHash != "" || u.IsAdmin || u.MustChangePassword {
		t.Errorf("created %+v", u)
	}
	def, err := st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if role, err := st.RoleIn(ctx, def, u.ID); err != nil || role != "editor" {
		t.Errorf("role in the default project: %q, %v", role, err)
	}
	if _, err := st.CreateSSOUser(ctx, "ANN@lab.test", "owner"); !errors.Is(err, store.ErrExists) {
		t.Errorf("taken email: %v, want ErrExists", err)
	}
	if role, _ := st.RoleIn(ctx, def, u.ID); role != "editor" {
		t.Errorf("role after the refused second creation: %q", role)
	}
	if _, err := st.CreateSSOUser(ctx, "bob@lab.test", "admin"); err == nil {
		t.Error("role admin: accepted")
	}
	if _, err := st.UserByEmail(ctx, "bob@lab.test"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused account exists: %v", err)
	}
}
