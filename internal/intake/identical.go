package intake

import (
	"crypto/sha256"
	"fmt"
	"io"
)

// Upload is one of a model's stored files: its name, size in bytes and a
// reader of its bytes.
type Upload struct {
	Name string
	Size int64
	Open func() (io.ReadCloser, error)
}

// IdenticalFiles refuses a model's files (pooled per problem) when two of
// them hold the same bytes: pooled, each of their samples would count
// twice, and n doubles with no warning (a new user picked one file twice).
// Only files of equal size are read (SHA-256); the error names both.
func IdenticalFiles(model string, files []Upload) error {
	bySize := map[int64][]int{}
	for i, f := range files {
		bySize[f.Size] = append(bySize[f.Size], i)
	}
	seen := map[[sha256.Size]byte]int{}
	for i, f := range files {
		if len(bySize[f.Size]) < 2 {
			continue
		}
		r, err := f.Open()
		if err != nil {
			return fmt.Errorf("model %q: open %s: %w", model, f.Name, err)
		}
		h := sha256.New()
		_, err = io.Copy(h, r)
		r.Close()
		if err != nil {
			return fmt.Errorf("model %q: read %s: %w", model, f.Name, err)
		}
		var sum [sha256.Size]byte
		h.Sum(sum[:0])
		if j, ok := seen[sum]; ok {
			return fmt.Errorf("model %q: %s and %s are the same file (identical bytes; files %d and %d of the model): pooled, each of its samples would count twice; give each seed's or repeat's file once",
				model, files[j].Name, f.Name, j+1, i+1)
		}
		seen[sum] = i
	}
	return nil
}
