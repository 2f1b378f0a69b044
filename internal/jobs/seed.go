package jobs

import (
	"encoding/binary"
	"hash/fnv"
)

// MaxSampleSeed bounds the seeds SampleSeed returns: every seed is in
// [0, MaxSampleSeed]. 2^31 − 1 fits every server's seed field: vLLM and
// SGLang take a signed 64-bit integer, TGI an unsigned one, llama.cpp an
// unsigned 32-bit one (where −1 means "random"), Ollama a signed int.
const MaxSampleSeed = 1<<31 - 1

// SampleSeed returns the seed sample index of one problem is requested with
// when a comparison's sampling config sets seed. It depends only on (seed,
// problemKey, index), so a retry, a chunk resumed after a pause and the new
// samples of a raised n ask for the same text they would have got at first,
// and no two sample indices of one problem share a seed.
//
// problemKey is the problem's stable key (store.Problem.Key: the dataset's
// id field or its line number), not its database id, so the same dataset
// sampled in another database gets the same seeds. index is the 0-based
// sample index.
//
// Derivation: b = FNV-1a 64 over the seed's 8 bytes (little-endian), the
// key's bytes and a 0 byte; the result is (b + index) mod 2^31. Consecutive
// indices get consecutive seeds, so within one problem seeds repeat only
// after 2^31 samples; vLLM's rule for n > 1 (choice i of a request with seed
// s gets s + i) would give the same seeds to one request for a whole chunk.
func SampleSeed(seed int64, problemKey string, index int) int64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(seed))
	h.Write(b[:])
	h.Write([]byte(problemKey))
	h.Write([]byte{0})
	return int64((h.Sum64() + uint64(index)) & MaxSampleSeed)
}
