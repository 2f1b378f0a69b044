package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	neturl "net/url"
	"os"
	"strings"

	"github.com/reach-lab/reach/internal/auth"
	"github.com/reach-lab/reach/internal/store"
)

// splitArgs moves flags before positional arguments, so that both
// "user create --admin EMAIL" and "user create EMAIL --admin" parse.
// valueFlags are the flags that take a separate value.
func splitArgs(args []string, valueFlags ...string) (flags, pos []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		for _, v := range valueFlags {
			if name == v && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		}
	}
	return flags, pos
}

// runUser: reach user create [--admin] EMAIL | reach user reset-password EMAIL.
// Both print a one-time password; the user sets their own at first sign-in.
func runUser(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: reach user create [--admin] EMAIL | reach user reset-password EMAIL")
	}
	sub := args[0]
	fs, dbURL := newFlags("user "+sub, os.Stderr)
	admin := fs.Bool("admin", false, "make the user an instance admin (all projects, users, jobs)")
	flags, pos := splitArgs(args[1:], "database-url")
	if err := parseFlags(fs, flags); err != nil {
		return err
	}
	if err := checkUserArgs(fs, sub, pos); err != nil {
		return err
	}
	email := store.NormalizeEmail(pos[0])
	st, err := openStore(ctx, *dbURL, false)
	if err != nil {
		return err
	}
	defer st.Close()
	password, err := auth.OneTimePassword()
	if err != nil {
		return err
	}
	hash, err := auth.HashPassword(password, auth.DefaultParams)
	if err != nil {
		return err
	}
	switch sub {
	case "create":
		if _, err := st.CreateUser(ctx, email, hash, *admin, true); err != nil {
			if errors.Is(err, store.ErrExists) {
				return fmt.Errorf("%s already has an account (reach user reset-password %s gives a new one-time password)", email, email)
			}
			return err
		}
	case "reset-password":
		u, err := st.UserByEmail(ctx, email)
		if err != nil {
			return err
		}
		// Like the users page's reset: sessions end, API tokens are revoked.
		if err := st.ResetPassword(ctx, u.ID, hash); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown user command %q: use create or reset-password", sub)
	}
	fmt.Fprintf(os.Stderr, "Sign in as %s with this one-time password; Reach asks for a new one right away:\n", email)
	fmt.Fprintln(stdout, password)
	return nil
}

// checkUserArgs refuses what `reach user SUB` would otherwise ignore or
// fail on late: --admin on reset-password (it changes no role), a missing or
// extra EMAIL, and an EMAIL that is not an address (no local part, no @, no
// domain).
func checkUserArgs(fs *flag.FlagSet, sub string, pos []string) error {
	if sub != "create" && sub != "reset-password" {
		return fmt.Errorf("unknown user command %q: use create or reset-password", sub)
	}
	var refused error
	fs.Visit(func(f *flag.Flag) {
		if sub == "reset-password" && f.Name == "admin" {
			refused = errors.New("reset-password does not take --admin: it only gives a new one-time password and leaves the account's role as it is")
		}
	})
	if refused != nil {
		return refused
	}
	if len(pos) != 1 {
		if sub == "create" {
			return errors.New("usage: reach user create [--admin] EMAIL")
		}
		return errors.New("usage: reach user reset-password EMAIL")
	}
	local, domain, ok := strings.Cut(strings.TrimSpace(pos[0]), "@")
	if !ok || local == "" || domain == "" || strings.ContainsAny(pos[0], " \t<>") {
		return fmt.Errorf("%q is not a valid email address", pos[0])
	}
	return nil
}

// runToken: reach token create --user EMAIL [--name NAME] prints a new API
// token for scripts (Authorization: Bearer TOKEN).
func runToken(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 || args[0] != "create" {
		return errors.New("usage: reach token create --user EMAIL [--name NAME]")
	}
	fs, dbURL := newFlags("token create", os.Stderr)
	email := fs.String("user", "", "the account the token acts as")
	name := fs.String("name", "command line", "what the token is for (shown in the token list)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if *email == "" {
		return errors.New("usage: reach token create --user EMAIL [--name NAME]")
	}
	st, err := openStore(ctx, *dbURL, false)
	if err != nil {
		return err
	}
	defer st.Close()
	u, err := st.UserByEmail(ctx, *email)
	if err != nil {
		return err
	}
	token, hash, err := auth.NewToken(auth.PrefixAPI)
	if err != nil {
		return err
	}
	if _, err := st.CreateAPIToken(ctx, u.ID, *name, token[:len(auth.PrefixAPI)+4], hash); err != nil {
		return err
	}
	fmt.Fprintln(stdout, token)
	return nil
}

// signInHelp tells whoever started `reach serve` how to get in: on an
// instance without accounts nobody can (every page needs a sign-in), so it
// says how to create the first admin.
func signInHelp(ctx context.Context, st *store.Store, w io.Writer, url, dbURL string) error {
	n, err := st.CountUsers(ctx)
	if err != nil {
		return err
	}
	if n > 0 {
		fmt.Fprintf(w, "\nReach is up: sign in at %s/login\n\n", url)
		return nil
	}
	// Another shell has neither this process's flags nor its environment:
	// name the database unless it is the default one.
	db := ""
	if dbURL != defaultDatabaseURL {
		db = " --database-url '" + strings.ReplaceAll(dbURL, "'", `'\''`) + "'"
		if u, err := neturl.Parse(dbURL); err != nil || (u.User != nil && func() bool { _, ok := u.User.Password(); return ok }()) {
			db = ` --database-url "$DATABASE_URL"` // a password is not printed
		}
	}
	fmt.Fprintf(w, `
Reach is up at %s, and has no accounts yet: every page needs a sign-in.
Create the first admin (prints a one-time password):

    %s user create%s --admin you@example.org

or open %s/setup in a browser on this machine.

`, url, selfName(), db, url)
	return nil
}

// selfName is how to run this binary again from the current directory.
func selfName() string {
	if len(os.Args) > 0 && strings.Contains(os.Args[0], "/") && !strings.HasPrefix(os.Args[0], "/tmp/") {
		return os.Args[0]
	}
	return "reach"
}
