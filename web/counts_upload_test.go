package web_test

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
)

// A counts CSV is read whole when it is uploaded: a bad row is refused with
// the form, naming file, line and why, and nothing is stored (a new user's
// c > n, n = 0 and repeated rows were accepted, then failed in the queue).
func TestUploadRefusesBadCountsAtOnce(t *testing.T) {
	a := startApp(t)
	acct := newAccount(t, a.st, a.url, "counts@lab.org", false, "editor")
	dataset := `{"unique_id": "p0", "problem": "1+1?", "answer": "2"}` + "\n" + `{"unique_id": "p1", "problem": "2+2?", "answer": "4"}` + "\n"
	good := "problem_id,n,correct\np0,8,3\np1,8,8\n"
	before, err := a.st.CountComparisons(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, rl, want string }{
		{"c over n", "problem_id,n,correct\np0,8,3\np1,8,9\n", "rl.csv:3"},
		{"n zero", "problem_id,n,correct\np0,0,0\np1,8,1\n", "rl.csv:2"},
		{"twice", "problem_id,n,correct\np0,8,3\np0,8,1\n", "rl.csv:3"},
		{"negative", "problem_id,n,correct\np0,8,-1\np1,8,1\n", "rl.csv:2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			_ = mw.WriteField("name", "counts "+tc.name)
			file := func(field, name, text string) {
				w, _ := mw.CreateFormFile(field, name)
				_, _ = io.WriteString(w, text)
			}
			file("dataset_file", "ds.jsonl", dataset)
			_ = mw.WriteField("model_role", "base")
			_ = mw.WriteField("model_name", "base")
			file("model_file", "base.csv", good)
			_ = mw.WriteField("model_role", "rl")
			_ = mw.WriteField("model_name", "rl")
			file("model_file", "rl.csv", tc.rl)
			_ = mw.Close()
			status, page := postNewComparison(t, a, acct, &body, mw.FormDataContentType())
			if status != http.StatusBadRequest || !strings.Contains(page, tc.want) || !strings.Contains(page, `model &#34;rl&#34;`) {
				t.Errorf("HTTP %d, want 400 naming %s: %s", status, tc.want, brief(page))
			}
		})
	}
	if after, err := a.st.CountComparisons(context.Background()); err != nil || after != before {
		t.Errorf("comparisons %d before, %d after (%v): a refused upload stored one", before, after, err)
	}
}
