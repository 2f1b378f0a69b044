package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/jackc/pgx/v5"
	"github.com/klauspost/compress/zstd"
)

// ChunkSize is the size of one stored upload chunk before compression.
// Uploads are kept in Postgres (not on a local disk) so that any worker on
// any machine can import them; chunking keeps memory flat whatever the
// file size.
const ChunkSize = 1 << 20

// Each chunk is compressed on its own with zstd at its fastest level: model
// completions compress 3-5x, which cuts the bytes (and WAL) Postgres writes
// for an upload by as much, for about 2 ms of CPU per MiB. Chunks stay
// independently readable.
var (
	zenc, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	zdec, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(4*ChunkSize))
)

const codecZstd = "zstd"

// ErrTooLarge is returned by SaveUpload when a file exceeds its size limit.
var ErrTooLarge = errors.New("file too large")

// SaveUpload streams r into a new upload and returns its id and size in
// bytes. maxBytes <= 0 means no limit; above it the upload is deleted and
// ErrTooLarge is returned. At most one chunk is held in memory.
func (s *Store) SaveUpload(ctx context.Context, filename string, r io.Reader, maxBytes int64) (int64, int64, error) {
	var id int64
	if err := s.db.QueryRow(ctx, `INSERT INTO uploads (filename, codec) VALUES ($1, $2) RETURNING id`, filename, codecZstd).Scan(&id); err != nil {
		return 0, 0, fmt.Errorf("create upload %q: %w", filename, err)
	}
	buf := make([]byte, ChunkSize)
	var zbuf []byte
	var size int64
	for seq := 0; ; seq++ {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			size += int64(n)
			if maxBytes > 0 && size > maxBytes {
				_ = s.DeleteUpload(context.WithoutCancel(ctx), id)
				return 0, 0, fmt.Errorf("%s: %w (limit %d MiB)", filename, ErrTooLarge, maxBytes>>20)
			}
			zbuf = zenc.EncodeAll(buf[:n], zbuf[:0])
			if _, err := s.db.Exec(ctx, `INSERT INTO upload_chunks (upload_id, seq, data) VALUES ($1, $2, $3)`, id, seq, zbuf); err != nil {
				return 0, 0, fmt.Errorf("store upload %q chunk %d: %w", filename, seq, err)
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			_ = s.DeleteUpload(context.WithoutCancel(ctx), id)
			return 0, 0, fmt.Errorf("read upload %q: %w", filename, err)
		}
	}
	if _, err := s.db.Exec(ctx, `UPDATE uploads SET size = $2, complete = true WHERE id = $1`, id, size); err != nil {
		return 0, 0, fmt.Errorf("finish upload %q: %w", filename, err)
	}
	return id, size, nil
}

// Upload describes a stored file.
type Upload struct {
	ID       int64
	Filename string
	Size     int64
}

// GetUpload returns an upload's metadata.
func (s *Store) GetUpload(ctx context.Context, id int64) (Upload, error) {
	u := Upload{ID: id}
	err := s.db.QueryRow(ctx, `SELECT filename, size FROM uploads WHERE id = $1 AND complete`, id).Scan(&u.Filename, &u.Size)
	if errors.Is(err, pgx.ErrNoRows) {
		return u, fmt.Errorf("upload %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return u, fmt.Errorf("upload %d: %w", id, err)
	}
	return u, nil
}

// UploadHead returns up to n bytes from the start of an upload (for sniffing
// its format).
func (s *Store) UploadHead(ctx context.Context, id int64, n int) ([]byte, error) {
	r := s.OpenUpload(ctx, id)
	buf := make([]byte, n)
	k, err := io.ReadFull(r, buf)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	return buf[:k], nil
}

// OpenUpload returns a reader over an upload's bytes that fetches one chunk
// at a time.
func (s *Store) OpenUpload(ctx context.Context, id int64) io.Reader {
	return &uploadReader{ctx: ctx, s: s, id: id}
}

type uploadReader struct {
	ctx   context.Context
	s     *Store
	id    int64
	seq   int
	codec *string // read with the first chunk
	cur   *bytes.Reader
	plain []byte
	done  bool
}

func (u *uploadReader) Read(p []byte) (int, error) {
	for {
		if u.cur != nil && u.cur.Len() > 0 {
			return u.cur.Read(p)
		}
		if u.done {
			return 0, io.EOF
		}
		if u.codec == nil {
			var codec string
			if err := u.s.db.QueryRow(u.ctx, `SELECT codec FROM uploads WHERE id = $1`, u.id).Scan(&codec); err != nil {
				if errors.Is(err, pgx.ErrNoRows) {
					return 0, fmt.Errorf("upload %d: %w", u.id, ErrNotFound)
				}
				return 0, fmt.Errorf("read upload %d: %w", u.id, err)
			}
			u.codec = &codec
		}
		var data []byte
		err := u.s.db.QueryRow(u.ctx, `SELECT data FROM upload_chunks WHERE upload_id = $1 AND seq = $2`, u.id, u.seq).Scan(&data)
		if errors.Is(err, pgx.ErrNoRows) {
			u.done = true
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("read upload %d chunk %d: %w", u.id, u.seq, err)
		}
		if *u.codec == codecZstd {
			if u.plain, err = zdec.DecodeAll(data, u.plain[:0]); err != nil {
				return 0, fmt.Errorf("read upload %d chunk %d: %w", u.id, u.seq, err)
			}
			data = u.plain
		}
		u.seq++
		u.cur = bytes.NewReader(data)
	}
}

// DeleteUpload removes an upload and its chunks.
func (s *Store) DeleteUpload(ctx context.Context, id int64) error {
	if _, err := s.db.Exec(ctx, `DELETE FROM uploads WHERE id = $1`, id); err != nil {
		return fmt.Errorf("delete upload %d: %w", id, err)
	}
	return nil
}
