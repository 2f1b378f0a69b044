package analysis

import "testing"

// Before a report is read, the cache drops old ones so that the reports it
// keeps and the new one, as large as the largest of its comparison's, fit
// the byte bound together: not only after the new one is in memory.
func TestCacheMakesRoomBeforeReading(t *testing.T) {
	c := NewCache(nil, 8)
	c.SetMaxBytes(300)
	put := func(id int64, variant string, bytes, used int64) {
		e := &Entry{Bytes: bytes}
		e.used.Store(used)
		c.items[cacheKey{id, variant}] = e
	}
	has := func(id int64, variant string) bool { _, ok := c.items[cacheKey{id, variant}]; return ok }

	put(1, "all", 250, 1) // a million problems' default view
	put(2, "all", 10, 2)  // a small comparison, used later
	c.makeRoom(cacheKey{2, "biased"})
	if !has(1, "all") || !has(2, "all") {
		t.Fatal("a small report dropped the others although all fit")
	}
	c.makeRoom(cacheKey{1, "unguessable"})
	if has(1, "all") {
		t.Error("the large view stayed while another as large is read: both in memory")
	}
	if !has(2, "all") {
		t.Error("the small report was dropped although the large one's going made room")
	}
	// Nothing of the comparison cached: nothing is dropped ahead.
	put(3, "all", 280, 3)
	c.makeRoom(cacheKey{4, "all"})
	if !has(3, "all") || !has(2, "all") {
		t.Error("reports dropped ahead of a comparison of unknown size")
	}
}
