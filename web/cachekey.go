package web

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
)

// keyHash builds a cache key from what a cached result depends on: every
// string goes in with its length, so that no two different inputs share a
// key by splitting differently.
type keyHash struct {
	h hash.Hash
	b []byte
}

func newKeyHash() *keyHash { return &keyHash{h: sha256.New()} }

func (k *keyHash) num(v int64) {
	k.b = binary.LittleEndian.AppendUint64(k.b, uint64(v))
	if len(k.b) > 4096 {
		k.h.Write(k.b)
		k.b = k.b[:0]
	}
}

func (k *keyHash) str(s string) {
	k.num(int64(len(s)))
	k.h.Write(k.b)
	k.b = k.b[:0]
	k.h.Write([]byte(s))
}

func (k *keyHash) sum() [sha256.Size]byte {
	k.h.Write(k.b)
	var out [sha256.Size]byte
	k.h.Sum(out[:0])
	return out
}
