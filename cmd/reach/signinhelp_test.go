package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/reach-lab/reach/internal/testdb"
)

// The first-admin hint names the database when it is not the default one
// (a new user ran it in another shell, without DATABASE_URL, and it
// failed), and never prints a password.
func TestSignInHelpNamesTheDatabase(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	for _, c := range []struct{ url, want, not string }{
		{defaultDatabaseURL, "user create --admin", "--database-url"},
		{"postgres://postgres@127.0.0.1:5432/reach_trial?sslmode=disable", "user create --database-url 'postgres://postgres@127.0.0.1:5432/reach_trial?sslmode=disable' --admin", ""},
		{"postgres://reach:s3cret@db:5432/reach", `user create --database-url "$DATABASE_URL" --admin`, "s3cret"},
	} {
		var b bytes.Buffer
		if err := signInHelp(ctx, st, &b, "http://127.0.0.1:8080", c.url); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) || (c.not != "" && strings.Contains(b.String(), c.not)) {
			t.Errorf("%s:\n%s", c.url, b.String())
		}
	}
}
