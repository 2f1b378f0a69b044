package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/reach-lab/reach/internal/store"
)

// send posts a form as role and returns the status, Location and body.
func (f *fixture) send(role, path string, v url.Values) (int, string, string) {
	f.t.Helper()
	resp := f.do(role, "POST", path, "application/x-www-form-urlencoded", []byte(v.Encode()))
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

// page gets a page as role and returns the status and body.
func (f *fixture) page(role, path string) (int, string) {
	f.t.Helper()
	resp := f.do(role, "GET", path, "", nil)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var shareURLRe = regexp.MustCompile(`id="share-url">([^<]+)<`)

// newShareURL is the link a share form's answer shows once.
func newShareURL(t *testing.T, body string) string {
	t.Helper()
	m := shareURLRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no new share link in the answer:\n%.500s", body)
	}
	return html.UnescapeString(m[1])
}

// Share links (issue 14): a label set when creating shows in the list, as
// text; the Expires column says when, "never", or "expired …"; Revoke
// first asks on a page of its own (the link still opens), and only its
// form revokes; the audit log names the link by its label.
func TestShareLabelExpiryAndRevokeConfirm(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	shares := fmt.Sprintf("/comparisons/%d/shares", f.cid)
	const label = `workshop <b>slides</b>`
	code, _, body := f.send("owner", shares, url.Values{"label": {label}, "chart": {""}, "expires_days": {"7"}})
	if code != 200 {
		t.Fatalf("create a labelled share link: HTTP %d\n%.500s", code, body)
	}
	link := newShareURL(t, body)
	if code, _, body := f.send("owner", shares, url.Values{"label": {strings.Repeat("x", 201)}}); code != 400 || !strings.Contains(body, "Label: at most 200 characters") {
		t.Errorf("a 201-character label: HTTP %d, want 400 naming the limit", code)
	}
	past := time.Now().Add(-time.Hour)
	expiredID, _ := shareToken(t, f.srv.st, store.ShareLink{ComparisonID: f.cid, Label: "old", ExpiresAt: &past})

	_, list := f.page("owner", shares)
	rows := regexp.MustCompile(`(?s)<tr data-share-id="(\d+)">(.*?)</tr>`).FindAllStringSubmatch(list, -1)
	cells := map[string][]string{} // label -> expires, state
	ids := map[string]string{}     // label -> link id
	for _, r := range rows {
		lab := regexp.MustCompile(`(?s)<td class="label">(.*?)</td>`).FindStringSubmatch(r[2])
		exp := regexp.MustCompile(`(?s)<td class="expires">(.*?)</td>`).FindStringSubmatch(r[2])
		state := regexp.MustCompile(`(?s)<td class="state">(.*?)</td>`).FindStringSubmatch(r[2])
		if lab == nil || exp == nil || state == nil {
			t.Fatalf("share row without label, expires or state cells: %s", r[2])
		}
		cells[html.UnescapeString(lab[1])] = []string{exp[1], strings.TrimSpace(state[1])}
		ids[html.UnescapeString(lab[1])] = r[1]
	}
	week := time.Now().Add(7 * 24 * time.Hour).UTC().Format("2006-01-02")
	if c := cells[label]; len(c) != 2 || !strings.HasPrefix(c[0], week) || c[1] != "live" {
		t.Errorf("labelled link's expires and state %q, want %s… and live", c, week)
	}
	if c := cells["old"]; len(c) != 2 || !strings.HasPrefix(c[0], "expired "+past.UTC().Format("2006-01-02")) || c[1] != "expired" {
		t.Errorf("expired link's cells %q", c)
	}
	if c := cells[""]; len(c) != 2 || c[0] != "never" { // the fixture's own links, without label or expiry
		t.Errorf("unlabelled link's expires %q, want never", c)
	}
	if strings.Contains(list, "<b>slides</b>") {
		t.Error("the label's markup became markup")
	}

	// Revoke asks first: the list offers a link, not a form that revokes.
	sid := ids[label]
	if !strings.Contains(list, fmt.Sprintf(`href="/shares/%s/revoke"`, sid)) || strings.Contains(list, `action="/shares/`) {
		t.Errorf("the list revokes without asking (a form) or offers no Revoke link for link %s", sid)
	}
	code, confirm := f.page("owner", "/shares/"+sid+"/revoke")
	if code != 200 || !strings.Contains(confirm, "Revoke share link “"+html.EscapeString(label)+"”?") || !strings.Contains(confirm, `id="confirm-revoke"`) {
		t.Fatalf("revoke confirmation: HTTP %d\n%.800s", code, confirm)
	}
	if code, _ := get(t, link); code != 200 {
		t.Errorf("the link after only asking: HTTP %d, want 200 (not revoked yet)", code)
	}
	if code, _ := f.page("editor", "/shares/"+sid+"/revoke"); code != 403 {
		t.Errorf("revoke confirmation as editor: HTTP %d, want 403", code)
	}
	code, loc, _ := f.send("owner", "/shares/"+sid+"/revoke", nil)
	if code != 303 || loc != shares {
		t.Errorf("confirm revoke: HTTP %d to %q", code, loc)
	}
	if code, _ := get(t, link); code != 404 {
		t.Errorf("the revoked link: HTTP %d, want 404", code)
	}
	if _, again := f.page("owner", "/shares/"+sid+"/revoke"); strings.Contains(again, `id="confirm-revoke"`) {
		t.Error("a revoked link's page still offers to revoke it")
	}
	if _, again := f.page("owner", fmt.Sprintf("/shares/%d/revoke", expiredID)); strings.Contains(again, `id="confirm-revoke"`) {
		t.Error("an expired link's page offers to revoke it")
	}
	es, err := f.srv.st.Audit(ctx, f.cid, 0)
	if err != nil || len(es) < 2 || es[0].Action != "share-revoke" || !strings.Contains(es[0].Target, "("+label+")") {
		t.Errorf("audit log %+v (%v): want the revocation naming the label", es, err)
	}
	// The API takes the label and show_notes too.
	resp := f.do("owner", "POST", fmt.Sprintf("/api/v1/comparisons/%d/shares", f.cid), "application/json", []byte(`{"label": "from CI", "show_notes": true}`))
	var out struct {
		ID int64 `json:"id"`
	}
	err = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("API share with a label: HTTP %d (%v)", resp.StatusCode, err)
	}
	if l, err := f.srv.st.GetShare(ctx, out.ID); err != nil || l.Label != "from CI" || !l.ShowNotes {
		t.Errorf("API share link %+v (%v): want label from CI with notes", l, err)
	}
}

// Notes on a comparison (issue 14): editors write markdown, everyone who
// reads the comparison sees it rendered and sanitised; the limit is 64 KiB
// with an error that says so and keeps the draft; each change is audited
// with who made it; share pages show the notes only if the link says so.
func TestComparisonNotes(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	notes := fmt.Sprintf("/comparisons/%d/notes", f.cid)
	hostile := "# Findings\n\nRL **narrows** coverage, see [paper](https://arxiv.org/abs/2504.13837).\n\n" +
		xssScript + "\n\n" + xssImg + "\n\n" + xssLink + "\n\n[md link](javascript:window.__xss=7)\n\n<div onclick=\"window.__xss=8\">raw</div>\n"
	code, loc, _ := f.send("editor", notes, url.Values{"body": {strings.ReplaceAll(hostile, "\n", "\r\n")}})
	if code != 303 || loc != fmt.Sprintf("/comparisons/%d#notes", f.cid) {
		t.Fatalf("save notes: HTTP %d to %q", code, loc)
	}
	n, err := f.srv.st.GetNote(ctx, f.cid)
	if err != nil || n.Body != hostile || n.UpdatedBy != f.acc["editor"].ID {
		t.Fatalf("stored note %+v (%v): want the text as typed (LF line ends), by the editor", n, err)
	}
	// A form without the body field (a client's typo) is refused, not read as "delete".
	if code, _, body := f.send("editor", notes, url.Values{"text": {"typo"}}); code != 400 || !strings.Contains(body, "no body field") {
		t.Errorf("notes form without body: HTTP %d %q, want 400", code, body)
	}
	if n, _ := f.srv.st.GetNote(ctx, f.cid); n.Body != hostile {
		t.Error("a form without a body field changed the notes")
	}
	if code, _, _ := f.send("viewer", notes, url.Values{"body": {"mine"}}); code != 403 {
		t.Errorf("save notes as viewer: HTTP %d, want 403", code)
	}
	_, page := f.page("viewer", fmt.Sprintf("/comparisons/%d", f.cid))
	m := regexp.MustCompile(`(?s)<div class="markdown" id="notes-body">(.*?)</div>\s*<p class="muted small" id="notes-by">`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("comparison page has no rendered notes")
	}
	rendered := m[1]
	for _, want := range []string{"<h1>Findings</h1>", "<strong>narrows</strong>", `href="https://arxiv.org/abs/2504.13837"`} {
		if !strings.Contains(rendered, want) {
			t.Errorf("rendered notes lack %q:\n%s", want, rendered)
		}
	}
	for _, bad := range []string{"<script", "onerror", "onclick", "javascript:", "<img", "<div"} {
		if strings.Contains(strings.ToLower(rendered), bad) {
			t.Errorf("rendered notes hold %q:\n%s", bad, rendered)
		}
	}
	if strings.Contains(page, `id="edit-notes"`) {
		t.Error("a viewer is offered to edit the notes")
	}
	if _, page := f.page("editor", fmt.Sprintf("/comparisons/%d", f.cid)); !strings.Contains(page, `id="edit-notes"`) {
		t.Error("an editor is not offered to edit the notes")
	}

	// The limit: one byte over is refused and nothing changes; exactly 64 KiB is kept.
	over := strings.Repeat("é", store.MaxNoteBytes/2) + "x" // 2 bytes per é
	code, _, body := f.send("editor", notes, url.Values{"body": {over}})
	if code != 400 || !strings.Contains(body, "notes are at most 64 KiB (65536 bytes)") || !strings.Contains(body, "65537 bytes") {
		t.Errorf("notes over 64 KiB: HTTP %d\n%.600s", code, body)
	}
	if !strings.Contains(body, strings.Repeat("é", 100)) {
		t.Error("the refused draft is not kept in the editor")
	}
	if n, _ := f.srv.st.GetNote(ctx, f.cid); n.Body != hostile {
		t.Error("refused notes changed the stored ones")
	}
	if code, _, _ := f.send("editor", notes, url.Values{"body": {over[:store.MaxNoteBytes]}}); code != 303 {
		t.Errorf("notes of exactly 64 KiB: HTTP %d, want 303", code)
	}
	es, err := f.srv.st.Audit(ctx, f.cid, 0)
	if err != nil || len(es) < 2 || es[0].Action != "note" || es[0].UserID != f.acc["editor"].ID || es[1].Action != "note" ||
		!strings.HasPrefix(es[0].New, "65536 bytes: ") || !strings.HasPrefix(es[0].Old, fmt.Sprintf("%d bytes: # Findings", len(hostile))) {
		t.Errorf("audit log %+v (%v): want two note changes by the editor with sizes", es[:min(2, len(es))], err)
	}
	if code, _, _ := f.send("editor", notes, url.Values{"body": {hostile}}); code != 303 {
		t.Fatal("restore the notes")
	}

	// Share pages: notes only through a link made with show_notes.
	shares := fmt.Sprintf("/comparisons/%d/shares", f.cid)
	_, _, with := f.send("owner", shares, url.Values{"show_notes": {"on"}})
	_, _, without := f.send("owner", shares, nil)
	_, sharedWith := get(t, newShareURL(t, with))
	_, sharedWithout := get(t, newShareURL(t, without))
	if !strings.Contains(sharedWith, "<h1>Findings</h1>") || strings.Contains(sharedWith, "<script>window.__xss") {
		t.Error("a link made with show notes does not show them sanitised")
	}
	if strings.Contains(sharedWithout, "Findings") || strings.Contains(sharedWithout, `id="notes"`) {
		t.Error("a link made without show notes shows them")
	}
	// Emptying the notes deletes them.
	if code, _, _ := f.send("editor", notes, url.Values{"body": {"  \r\n"}}); code != 303 {
		t.Fatal("empty the notes")
	}
	if n, _ := f.srv.st.GetNote(ctx, f.cid); n.Body != "" {
		t.Errorf("emptied notes still hold %q", n.Body)
	}
}

// Collections (issue 14): editors reorder with up/down, rename (an empty
// name is refused) and delete after a confirmation; owners share a
// read-only page of the overlay and table that links nowhere into the
// instance and is gone with the collection, whose comparisons stay.
func TestCollectionEditsAndShare(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	st := f.srv.st
	c2, _, _ := readyComparison(t, st, "second run", f.project, secretA)
	c3, _, _ := readyComparison(t, st, "third run", f.project, secretA)
	kid := f.freshCollection(worldA)
	for _, c := range []int64{c2, c3} {
		if err := st.AddToCollection(ctx, kid, c); err != nil {
			t.Fatal(err)
		}
	}
	base := fmt.Sprintf("/collections/%d", kid)
	order := func() []int64 {
		ids, err := st.CollectionComparisons(ctx, kid)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	move := func(cid int64, dir string) {
		t.Helper()
		if code, _, body := f.send("editor", base+"/move", url.Values{"comparison_id": {fmt.Sprint(cid)}, "dir": {dir}}); code != 303 {
			t.Fatalf("move %d %s: HTTP %d\n%.300s", cid, dir, code, body)
		}
	}
	move(c3, "up")
	if got := order(); fmt.Sprint(got) != fmt.Sprint([]int64{f.cid, c3, c2}) {
		t.Errorf("after moving the third up: %v", got)
	}
	move(f.cid, "up") // already first: stays
	move(c2, "down")  // already last: stays
	move(f.cid, "down")
	if got := order(); fmt.Sprint(got) != fmt.Sprint([]int64{c3, f.cid, c2}) {
		t.Errorf("after moving the first down: %v", got)
	}
	_, page := f.page("viewer", base)
	if strings.Contains(page, "/move") || strings.Contains(page, "delete-collection") || strings.Contains(page, "share-collection") {
		t.Error("a viewer is offered to reorder, delete or share")
	}
	_, page = f.page("editor", base)
	if strings.Count(page, `class="button small move-up"`) != 2 || strings.Count(page, `class="button small move-down"`) != 2 || strings.Contains(page, "share-collection") {
		t.Error("an editor's page: want 2 up and 2 down buttons (none at the ends) and no Share")
	}
	if code, _, body := f.send("editor", base+"/move", url.Values{"comparison_id": {fmt.Sprint(c2)}, "dir": {"sideways"}}); code != 400 {
		t.Errorf("move sideways: HTTP %d %.200s", code, body)
	}

	if code, _, body := f.send("editor", base+"/rename", url.Values{"name": {"  "}}); code != 400 || !strings.Contains(body, "Give the collection a name.") {
		t.Errorf("rename to nothing: HTTP %d", code)
	}
	if code, _, _ := f.send("editor", base+"/rename", url.Values{"name": {"Budgets <1k>"}}); code != 303 {
		t.Errorf("rename: HTTP %d", code)
	}
	if k, _ := st.GetCollection(ctx, kid); k.Name != "Budgets <1k>" {
		t.Errorf("renamed collection is %q", k.Name)
	}

	// Share: owners only; the page shows the overlay and table, no link into the instance.
	if code, _, _ := f.send("editor", base+"/shares", url.Values{"label": {"x"}}); code != 403 {
		t.Errorf("share as editor: HTTP %d, want 403", code)
	}
	code, _, body := f.send("owner", base+"/shares", url.Values{"label": {"for reviewers"}, "expires_days": {"1"}})
	if code != 200 {
		t.Fatalf("share the collection: HTTP %d", code)
	}
	link := newShareURL(t, body)
	if _, list := f.page("owner", base+"/shares"); !strings.Contains(list, `<td class="label">for reviewers</td>`) || !strings.Contains(list, "the collection&#39;s chart and table") {
		t.Error("the collection's share list lacks the link's label or scope")
	}
	code, shared := get(t, link)
	if code != 200 || !strings.Contains(shared, `id="overlay-chart"`) || strings.Count(shared, "<tr>") != 1+6 || !strings.Contains(shared, "Budgets &lt;1k&gt;") {
		t.Errorf("shared collection: HTTP %d, want the overlay and 6 model rows\n%.800s", code, shared)
	}
	for _, leak := range []string{"/comparisons/", "/collections/", "/projects/", secretA, "Sign out"} {
		if strings.Contains(shared, leak) {
			t.Errorf("shared collection page shows %q", leak)
		}
	}
	for _, sub := range []string{"/embed", "/data/crossover.csv", fmt.Sprintf("/problems/%d", f.pid)} {
		if code, _ := get(t, link+sub); code != 404 {
			t.Errorf("a collection link's %s: HTTP %d, want 404", sub, code)
		}
	}
	if es, _ := st.Audit(ctx, f.cid, 0); len(es) > 0 && es[0].Action == "share" {
		t.Error("a collection's share link was logged as one of its comparison's")
	}

	// Delete: asks first, then the collection and its links are gone, its comparisons stay.
	code, confirm := f.page("editor", base+"/delete")
	if code != 200 || !strings.Contains(confirm, `id="confirm-delete-collection"`) || !strings.Contains(confirm, "1 live share link (") || !strings.Contains(confirm, "3 comparisons stay") {
		t.Errorf("delete confirmation: HTTP %d\n%.600s", code, confirm)
	}
	if code, loc, _ := f.send("editor", base+"/delete", nil); code != 303 || loc != "/collections" {
		t.Errorf("delete: HTTP %d to %q", code, loc)
	}
	if _, err := st.GetCollection(ctx, kid); err == nil {
		t.Error("the collection is still there")
	}
	if code, _ := get(t, link); code != 404 {
		t.Errorf("share link of a deleted collection: HTTP %d, want 404", code)
	}
	for _, c := range []int64{f.cid, c2, c3} {
		if _, err := st.GetComparison(ctx, c); err != nil {
			t.Errorf("comparison %d went with the collection: %v", c, err)
		}
	}
}
