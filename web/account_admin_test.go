package web_test

// Account rules of issue 30: invitations for an email that has an account,
// disabled accounts, revoked invitations, and what a password reset ends.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/auth"
	"github.com/reach-lab/reach/internal/store"
)

// send makes one form request with cookie c (nil: none) and returns the
// status, the Location and the body.
func send(t *testing.T, method, u string, c *http.Cookie, v url.Values) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(v.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	if v != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if c != nil {
		req.AddCookie(c)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

// invite stores an invitation and returns its token.
func invite(t *testing.T, st *store.Store, inv store.Invite) string {
	t.Helper()
	token, hash, err := auth.NewToken(auth.PrefixInvite)
	if err != nil {
		t.Fatal(err)
	}
	if inv.ExpiresAt.IsZero() {
		inv.ExpiresAt = time.Now().Add(time.Hour)
	}
	if err := st.CreateInvite(context.Background(), hash, inv); err != nil {
		t.Fatal(err)
	}
	return token
}

func sessionOf(t *testing.T, cookies []*http.Cookie) *http.Cookie {
	t.Helper()
	for _, c := range cookies {
		if c.Name == "reach_session" && c.Value != "" {
			return c
		}
	}
	return nil
}

// An invitation for an email that got an account meanwhile (answered 500):
// its page says so, the account's own password accepts it, and the account
// joins the project with the invited role; nothing it had is lowered.
func TestInviteForExistingAccount(t *testing.T) {
	srv := newServer(t)
	ctx := context.Background()
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	projB, err := srv.st.CreateProject(ctx, "Project B", admin.ID)
	if err != nil {
		t.Fatal(err)
	}
	def, err := srv.st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Two invitations for bob, then bob's account appears (a first
	// invitation accepted, or `reach user create`): editor of the default
	// project.
	toB := invite(t, srv.st, store.Invite{Email: "bob@reach.test", ProjectID: &projB, Role: "editor", CreatedBy: admin.ID})
	toDefault := invite(t, srv.st, store.Invite{Email: "Bob@reach.test", ProjectID: &def, Role: "viewer", CreatedBy: admin.ID})
	bob := createUser(t, srv.st, "bob@reach.test", false, "editor")

	code, _, page := send(t, "GET", srv.url+"/invite/"+toB, nil, nil)
	if code != 200 || !strings.Contains(page, "already has an account") || !strings.Contains(page, "Project B") {
		t.Fatalf("invitation page for an existing account: HTTP %d, says it has an account %v\n%.400s", code,
			strings.Contains(page, "already has an account"), page)
	}
	code, _, _ = send(t, "POST", srv.url+"/invite/"+toB, nil, url.Values{"current": {"wrong password 123"}})
	if code != 401 {
		t.Errorf("accept with a wrong password: HTTP %d, want 401", code)
	}
	if rl, _ := srv.st.RoleIn(ctx, projB, bob.ID); rl != "" {
		t.Errorf("a wrong password joined project B as %q", rl)
	}
	req, _ := http.NewRequest("POST", srv.url+"/invite/"+toB, strings.NewReader(url.Values{"current": {testPassword}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 303 || sessionOf(t, resp.Cookies()) == nil {
		t.Fatalf("accept with the account's password: HTTP %d, signed in %v; want 303 and a session", resp.StatusCode,
			sessionOf(t, resp.Cookies()) != nil)
	}
	if rl, _ := srv.st.RoleIn(ctx, projB, bob.ID); rl != "editor" {
		t.Errorf("role in project B after accepting: %q, want editor", rl)
	}
	if code, _, _ := send(t, "GET", srv.url+"/invite/"+toB, nil, nil); code != 404 {
		t.Errorf("the used invitation: HTTP %d, want 404", code)
	}
	// The second invitation offers viewer where bob is editor: accepted,
	// and bob stays editor.
	if code, _, _ := send(t, "POST", srv.url+"/invite/"+toDefault, nil, url.Values{"current": {testPassword}}); code != 303 {
		t.Fatalf("accept the second invitation: HTTP %d, want 303", code)
	}
	if rl, _ := srv.st.RoleIn(ctx, def, bob.ID); rl != "editor" {
		t.Errorf("role in the default project after a viewer invitation: %q, want editor (not lowered)", rl)
	}
	// An admin invited as a non-admin stays an admin.
	toAdmin := invite(t, srv.st, store.Invite{Email: "admin@reach.test", ProjectID: &projB, Role: "viewer", CreatedBy: admin.ID})
	if code, _, _ := send(t, "POST", srv.url+"/invite/"+toAdmin, nil, url.Values{"current": {testPassword}}); code != 303 {
		t.Fatalf("the admin accepts an invitation: HTTP %d, want 303", code)
	}
	if u, _ := srv.st.UserByEmail(ctx, "admin@reach.test"); !u.IsAdmin {
		t.Error("accepting a non-admin invitation lowered the admin flag")
	}
	// A disabled account cannot join by invitation, even with its password.
	toCarl := invite(t, srv.st, store.Invite{Email: "carl@reach.test", ProjectID: &projB, Role: "owner", CreatedBy: admin.ID})
	carl := createUser(t, srv.st, "carl@reach.test", false, "")
	if err := srv.st.SetDisabled(ctx, carl.ID, true); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := send(t, "POST", srv.url+"/invite/"+toCarl, nil, url.Values{"current": {testPassword}}); code != 401 {
		t.Errorf("a disabled account accepts an invitation: HTTP %d, want 401", code)
	}
	if rl, _ := srv.st.RoleIn(ctx, projB, carl.ID); rl != "" {
		t.Errorf("a disabled account joined project B as %q", rl)
	}
}

// userRow is the users page's row of a user.
func userRow(page string, id int64) string {
	i := strings.Index(page, fmt.Sprintf(`data-user-id="%d"`, id))
	if i < 0 {
		return ""
	}
	j := strings.Index(page[i:], "</tr>")
	return page[i : i+j]
}

// An admin disables an account: its session and API token are refused on
// the next request, it cannot sign in; enabled again it can, with a new
// session (the old ones stay ended).
func TestDisableAccount(t *testing.T) {
	srv := newServer(t)
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	carol := newAccount(t, srv.st, srv.url, "carol@reach.test", false, "viewer")
	bearer := func(token string) int {
		code, _ := get(t, srv.url+"/api/v1/comparisons", "Authorization", "Bearer "+token)
		return code
	}
	if code, _, _ := send(t, "GET", srv.url+"/", carol.Cookie, nil); code != 200 || bearer(carol.Token) != 200 {
		t.Fatalf("before: home HTTP %d, API HTTP %d", code, bearer(carol.Token))
	}
	code, _, page := send(t, "GET", srv.url+fmt.Sprintf("/admin/users/%d/disable", carol.ID), admin.Cookie, nil)
	if code != 200 || !strings.Contains(page, `id="confirm-action"`) {
		t.Fatalf("disable confirmation: HTTP %d", code)
	}
	_, _, page = send(t, "GET", srv.url+"/admin/users", admin.Cookie, nil)
	if !strings.Contains(userRow(page, carol.ID), fmt.Sprintf("/admin/users/%d/disable", carol.ID)) {
		t.Error("the users page has no Disable for carol")
	}
	if code, _, _ := send(t, "POST", srv.url+fmt.Sprintf("/admin/users/%d/disable", carol.ID), admin.Cookie, url.Values{}); code != 303 {
		t.Fatalf("disable: HTTP %d, want 303", code)
	}
	if code, loc, _ := send(t, "GET", srv.url+"/", carol.Cookie, nil); code != 303 || !strings.HasPrefix(loc, "/login") {
		t.Errorf("disabled account's session: HTTP %d to %q, want the sign-in page", code, loc)
	}
	if code := bearer(carol.Token); code != 401 {
		t.Errorf("disabled account's API token: HTTP %d, want 401", code)
	}
	if code, _, _ := send(t, "POST", srv.url+"/login", nil, url.Values{"email": {carol.Email}, "password": {testPassword}}); code != 401 {
		t.Errorf("a disabled account signs in: HTTP %d, want 401", code)
	}
	_, _, page = send(t, "GET", srv.url+"/admin/users", admin.Cookie, nil)
	if row := userRow(page, carol.ID); !strings.Contains(row, "disabled") || !strings.Contains(row, "/enable") {
		t.Errorf("the users page does not show carol disabled with Enable: %q", row)
	}
	if code, _, _ := send(t, "POST", srv.url+fmt.Sprintf("/admin/users/%d/disable", admin.ID), admin.Cookie, url.Values{}); code != 400 {
		t.Errorf("an admin disables themselves: HTTP %d, want 400", code)
	}
	if code, _, _ := send(t, "POST", srv.url+fmt.Sprintf("/admin/users/%d/enable", carol.ID), admin.Cookie, url.Values{}); code != 303 {
		t.Fatalf("enable: HTTP %d, want 303", code)
	}
	c := login(t, srv.url, carol.Email, testPassword)
	if code, _, _ := send(t, "GET", srv.url+"/", c, nil); code != 200 {
		t.Errorf("enabled again, signed in anew: home HTTP %d", code)
	}
	if code, _, _ := send(t, "GET", srv.url+"/", carol.Cookie, nil); code != 303 {
		t.Errorf("enabled again, the session from before disabling: HTTP %d, want 303 (ended)", code)
	}
	if code := bearer(carol.Token); code != 401 {
		t.Errorf("enabled again, the token from before disabling: HTTP %d, want 401 (revoked)", code)
	}
}

// An admin revokes an unused invitation from the users page: its link then
// says so.
func TestRevokeInvite(t *testing.T) {
	srv := newServer(t)
	ctx := context.Background()
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	code, _, page := send(t, "POST", srv.url+"/admin/invites", admin.Cookie, url.Values{"email": {"dave@reach.test"}})
	m := regexp.MustCompile(`/invite/([A-Za-z0-9_-]+)</pre>`).FindStringSubmatch(page)
	if code != 200 || m == nil {
		t.Fatalf("create invitation: HTTP %d, link shown %v", code, m != nil)
	}
	token := m[1]
	is, err := srv.st.OpenInvites(ctx)
	if err != nil || len(is) != 1 {
		t.Fatalf("open invitations: %v, %d", err, len(is))
	}
	_, _, page = send(t, "GET", srv.url+"/admin/users", admin.Cookie, nil)
	revoke := fmt.Sprintf("/admin/invites/%d/revoke", is[0].ID)
	if !strings.Contains(page, "dave@reach.test") || !strings.Contains(page, revoke) {
		t.Error("the users page does not list the open invitation with Revoke")
	}
	if code, _, page := send(t, "GET", srv.url+revoke, admin.Cookie, nil); code != 200 || !strings.Contains(page, `id="confirm-action"`) {
		t.Errorf("revoke confirmation: HTTP %d", code)
	}
	if code, _, _ := send(t, "POST", srv.url+revoke, admin.Cookie, url.Values{}); code != 303 {
		t.Fatalf("revoke: HTTP %d, want 303", code)
	}
	code, _, page = send(t, "GET", srv.url+"/invite/"+token, nil, nil)
	if code != 404 || !strings.Contains(page, "revoked") {
		t.Errorf("the revoked invitation's link: HTTP %d, says revoked %v", code, strings.Contains(page, "revoked"))
	}
	if code, _, _ := send(t, "POST", srv.url+"/invite/"+token, nil, url.Values{"password": {testPassword}, "confirm": {testPassword}}); code != 404 {
		t.Errorf("accepting the revoked invitation: HTTP %d, want 404", code)
	}
	if _, err := srv.st.UserByEmail(ctx, "dave@reach.test"); err == nil {
		t.Error("a revoked invitation made an account")
	}
	if code, _, _ := send(t, "POST", srv.url+revoke, admin.Cookie, url.Values{}); code != 404 {
		t.Errorf("revoking it again: HTTP %d, want 404", code)
	}
}

// An admin's password reset ends the user's sessions and API tokens and
// gives a one-time password.
func TestAdminPasswordResetEndsAccess(t *testing.T) {
	srv := newServer(t)
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	erin := newAccount(t, srv.st, srv.url, "erin@reach.test", false, "viewer")
	code, _, page := send(t, "POST", srv.url+fmt.Sprintf("/admin/users/%d/reset-password", erin.ID), admin.Cookie, url.Values{})
	m := regexp.MustCompile(`<pre class="copyable" id="password-value">([^<]+)</pre>`).FindStringSubmatch(page)
	if code != 200 || m == nil {
		t.Fatalf("reset: HTTP %d, one-time password shown %v", code, m != nil)
	}
	if code, _, _ := send(t, "GET", srv.url+"/", erin.Cookie, nil); code != 303 {
		t.Errorf("session after an admin's reset: HTTP %d, want 303 (ended)", code)
	}
	if code, _ := get(t, srv.url+"/api/v1/comparisons", "Authorization", "Bearer "+erin.Token); code != 401 {
		t.Errorf("API token after an admin's reset: HTTP %d, want 401 (revoked)", code)
	}
	c := login(t, srv.url, erin.Email, m[1])
	if code, loc, _ := send(t, "GET", srv.url+"/", c, nil); code != 303 || loc != "/account/password" {
		t.Errorf("signed in with the one-time password: HTTP %d to %q, want the password page", code, loc)
	}
	if code, _, _ := send(t, "GET", srv.url+"/", admin.Cookie, nil); code != 200 {
		t.Errorf("the admin's own session after resetting someone: HTTP %d", code)
	}
}

// shareRow is the share list's row of link id.
func shareRow(page string, id int64) string {
	i := strings.Index(page, fmt.Sprintf(`data-share-id="%d"`, id))
	if i < 0 {
		return ""
	}
	j := strings.Index(page[i:], "</tr>")
	return page[i : i+j]
}

// Share links whose creator left the project (removed, demoted, disabled)
// stay live, and the comparison's other managers see each in the share
// list marked with why, and revoke it (README, Security).
func TestSharesOfCreatorsWhoLeft(t *testing.T) {
	srv := newServer(t)
	ctx := context.Background()
	admin := newAccount(t, srv.st, srv.url, "admin@reach.test", true, "")
	stays := newAccount(t, srv.st, srv.url, "stays@reach.test", false, "owner")
	removed := createUser(t, srv.st, "removed@reach.test", false, "owner")
	demoted := createUser(t, srv.st, "demoted@reach.test", false, "owner")
	disabled := createUser(t, srv.st, "disabled@reach.test", false, "owner")
	def, err := srv.st.DefaultProjectID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cid, _, _ := readyComparison(t, srv.st, "links of leavers", def, "What is 1+1?")
	links := map[string]struct {
		id    int64
		token string
	}{}
	for name, uid := range map[string]int64{"stays": stays.ID, "removed": removed.ID, "demoted": demoted.ID, "disabled": disabled.ID, "admin": admin.ID} {
		id, token := shareToken(t, srv.st, store.ShareLink{ComparisonID: cid, CreatedBy: uid})
		links[name] = struct {
			id    int64
			token string
		}{id, token}
	}
	if err := srv.st.RemoveMember(ctx, def, removed.ID); err != nil {
		t.Fatal(err)
	}
	if err := srv.st.SetMember(ctx, def, demoted.ID, "viewer"); err != nil {
		t.Fatal(err)
	}
	if err := srv.st.SetDisabled(ctx, disabled.ID, true); err != nil {
		t.Fatal(err)
	}
	for name, l := range links {
		if code, _ := get(t, srv.url+"/s/"+l.token); code != 200 {
			t.Errorf("link made by %s: HTTP %d, want 200 (links stay live)", name, code)
		}
	}
	want := map[string]string{"stays": "", "admin": "", "removed": "left the project", "demoted": "no longer an owner", "disabled": "disabled"}
	for _, who := range []account{stays, admin} {
		code, _, page := send(t, "GET", srv.url+fmt.Sprintf("/comparisons/%d/shares", cid), who.Cookie, nil)
		if code != 200 {
			t.Fatalf("share list as %s: HTTP %d", who.Email, code)
		}
		for name, l := range links {
			row := shareRow(page, l.id)
			if row == "" || !strings.Contains(row, "/revoke") {
				t.Errorf("%s's share list: the link made by %s is missing or has no Revoke", who.Email, name)
				continue
			}
			if has := strings.Contains(row, "creator-gone"); has != (want[name] != "") || !strings.Contains(row, want[name]) {
				t.Errorf("%s's share list: the link made by %s is marked %v, want %q\n%s", who.Email, name, has, want[name], row)
			}
		}
	}
	// The remaining owner revokes the link of the one who left.
	sid := links["removed"].id
	if code, _, _ := send(t, "POST", srv.url+fmt.Sprintf("/shares/%d/revoke", sid), stays.Cookie, url.Values{}); code != 303 {
		t.Fatalf("an owner revokes the link of a creator who left: HTTP %d, want 303", code)
	}
	if code, _ := get(t, srv.url+"/s/"+links["removed"].token); code != 404 {
		t.Errorf("the revoked link: HTTP %d, want 404", code)
	}
}
