// Package intake creates a comparison from local files (the CLI's
// `reach import` and the shipped example): it stores each file as an upload,
// sniffs its format and enqueues the same ImportJob the browser form does.
package intake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/reach-lab/reach/internal/ingest"
	"github.com/reach-lab/reach/internal/jobs"
	"github.com/reach-lab/reach/internal/store"
)

// File is a named source of bytes.
type File struct {
	Name string // shown to the user, e.g. "test.jsonl"
	Open func() (io.ReadCloser, error)
}

// LocalFile opens a file on disk.
func LocalFile(path string) File {
	return File{Name: filepath.Base(path), Open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

// Model is one model's samples file.
type Model struct {
	Name string
	Role string // base | rl | checkpoint | distilled
	Step *int
	File File
}

// Spec describes a comparison to create. Models[0] is the base model.
type Spec struct {
	Name       string
	SourceNote string
	Dataset    File
	DatasetID  int64 // use a loaded dataset instead of Dataset
	Models     []Model
	Reverify   bool
}

// Mapped reports, per model name, the field mapping that was guessed for a
// file in an unrecognised format (the CLI prints it).
type Mapped map[string]ingest.Mapping

// Create stores the files and enqueues the import. Files in an unknown
// JSONL layout are read with the guessed field mapping, returned in Mapped.
// On error nothing is kept.
func Create(ctx context.Context, st *store.Store, client *jobs.Client, spec Spec) (int64, Mapped, error) {
	if spec.Name == "" {
		return 0, nil, errors.New("the comparison needs a name")
	}
	if len(spec.Models) < 2 {
		return 0, nil, fmt.Errorf("a comparison needs a base model and at least one other model (got %d)", len(spec.Models))
	}
	var uploads []int64
	cleanup := func() {
		for _, id := range uploads {
			_ = st.DeleteUpload(context.WithoutCancel(ctx), id)
		}
	}
	save := func(f File) (int64, error) {
		r, err := f.Open()
		if err != nil {
			return 0, fmt.Errorf("open %s: %w", f.Name, err)
		}
		defer r.Close()
		id, _, err := st.SaveUpload(ctx, f.Name, r, 0)
		if err != nil {
			return 0, err
		}
		uploads = append(uploads, id)
		return id, nil
	}
	nc := store.NewComparison{Name: spec.Name, SourceNote: spec.SourceNote, Reverify: spec.Reverify, DatasetID: spec.DatasetID}
	if spec.DatasetID == 0 {
		if spec.Dataset.Open == nil {
			return 0, nil, errors.New("no dataset given")
		}
		id, err := save(spec.Dataset)
		if err != nil {
			cleanup()
			return 0, nil, err
		}
		nc.DatasetUploadID = id
	}
	mapped := Mapped{}
	for i, m := range spec.Models {
		role := m.Role
		if role == "" {
			role = "rl"
			if i == 0 {
				role = "base"
			}
		}
		id, err := save(m.File)
		if err != nil {
			cleanup()
			return 0, nil, err
		}
		head, err := st.UploadHead(ctx, id, 64<<10)
		if err != nil {
			cleanup()
			return 0, nil, err
		}
		format, mapping, err := ingest.Sniff(head, m.File.Name)
		if err != nil {
			cleanup()
			return 0, nil, fmt.Errorf("model %q: %w", m.Name, err)
		}
		run := store.NewRun{ModelName: m.Name, Role: role, Step: m.Step, UploadID: id, SourceFile: m.File.Name, Format: string(format)}
		if format == ingest.FormatMapped && mapping != nil {
			run.Mapping = mapping
			mapped[m.Name] = *mapping
		}
		nc.Runs = append(nc.Runs, run)
	}
	var cid int64
	err := st.WithTx(ctx, func(tx *store.Store) error {
		var err error
		if cid, err = tx.CreateComparison(ctx, nc); err != nil {
			return err
		}
		return jobs.StartImport(ctx, client, tx, cid)
	})
	if err != nil {
		cleanup()
		return 0, nil, err
	}
	return cid, mapped, nil
}

// ParseModelFlag splits a NAME=FILE command-line value.
func ParseModelFlag(v string) (name, path string, err error) {
	name, path, ok := strings.Cut(v, "=")
	if !ok || name == "" || path == "" {
		return "", "", fmt.Errorf("%q: want NAME=FILE", v)
	}
	return name, path, nil
}
