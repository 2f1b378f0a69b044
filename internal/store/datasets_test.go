package store_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/reach-lab/reach/internal/store"
	"github.com/reach-lab/reach/internal/testdb"
)

// Copies of one dataset kept in two projects (each uploaded it before the
// other shared it) are listed once to a member of both, as the older copy
// with both projects' names; a member of one project sees its own copy; a
// dataset without a hash and one of other content stay apart.
func TestListDatasetsFoldsCopies(t *testing.T) {
	st, _ := testdb.New(t)
	ctx := context.Background()
	both, err := st.CreateUser(ctx, "both@reach.test", "x", false, false)
	if err != nil {
		t.Fatal(err)
	}
	onlyB, err := st.CreateUser(ctx, "b@reach.test", "x", false, false)
	if err != nil {
		t.Fatal(err)
	}
	pa, err := st.CreateProject(ctx, "A", both.ID)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := st.CreateProject(ctx, "B", both.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetMember(ctx, pb, onlyB.ID, "editor"); err != nil {
		t.Fatal(err)
	}
	hash := bytes.Repeat([]byte{7}, 32)
	other := bytes.Repeat([]byte{8}, 32)
	dataset := func(name string, project int64, h []byte) int64 {
		t.Helper()
		id, err := st.CreateDataset(ctx, name, name)
		if err == nil {
			err = st.InsertProblems(ctx, id, []store.Problem{{Idx: 0, Key: "p0", Statement: "1+1", Reference: "2"}})
		}
		if err == nil {
			err = st.FinishDataset(ctx, id)
		}
		if err == nil && h != nil {
			err = st.SetDatasetHash(ctx, id, h)
		}
		if err == nil {
			err = st.ShareDataset(ctx, id, project)
		}
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	inA := dataset("d.jsonl", pa, hash)
	inB := dataset("d.jsonl", pb, hash)
	otherB := dataset("d.jsonl", pb, other)
	noHash := dataset("old.jsonl", pb, nil)

	list := func(u store.User) (ids []int64, projects [][]string) {
		t.Helper()
		ds, err := st.ListDatasetsFor(ctx, u.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			ids = append(ids, d.ID)
			projects = append(projects, d.Projects)
		}
		return ids, projects
	}
	ids, projects := list(both)
	if want := []int64{noHash, otherB, inA}; !slices.Equal(ids, want) {
		t.Fatalf("member of both projects sees datasets %v; want %v (the copies once, as the older)", ids, want)
	}
	if !slices.Equal(projects[2], []string{"A", "B"}) {
		t.Errorf("the folded copies name projects %v; want [A B]", projects[2])
	}
	if ids, _ := list(onlyB); !slices.Equal(ids, []int64{noHash, otherB, inB}) {
		t.Errorf("member of B sees datasets %v; want %v (B's own copy)", ids, []int64{noHash, otherB, inB})
	}
	// A project's upload finds its own copy, never another project's.
	err = st.WithTx(ctx, func(tx *store.Store) error {
		for _, c := range []struct {
			project, want int64
			h             []byte
		}{{pa, inA, hash}, {pb, inB, hash}, {pb, otherB, other}, {pa, 0, other}} {
			got, err := tx.SameDatasetIn(ctx, c.project, c.h, 0)
			if err != nil {
				return err
			}
			if got != c.want {
				t.Errorf("SameDatasetIn(project %d, %x…) = %d; want %d", c.project, c.h[:1], got, c.want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
