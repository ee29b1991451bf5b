package sqlitestore

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

// mappedJournal starts a journal at segment 1 beside path, skipping the
// test where segments are not mapped.
func mappedJournal(t *testing.T, path string) *journal {
	t.Helper()
	j, err := newJournal(path, 1)
	if err != nil {
		t.Fatal(err)
	}
	if j.m == nil {
		_ = j.close()
		t.Skip("segments are appended to with write(2) here")
	}
	return j
}

// storeWithMappedJournal makes a database (closed, for a test to open and
// replay into later) and a mapped journal beside it.
func storeWithMappedJournal(t *testing.T) (string, *journal) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tether.db")
	if err := openTemp(t, path).Close(); err != nil {
		t.Fatal(err)
	}
	return path, mappedJournal(t, path)
}

func frameOf(t *testing.T, id string) []byte {
	t.Helper()
	f, err := encodeFrame(plainSettlement(id))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func batchIDs(batches [][]backend.Settlement) []string {
	var ids []string
	for _, b := range batches {
		for _, st := range b {
			ids = append(ids, st.Entry.ID)
		}
	}
	return ids
}

// A process killed mid-append leaves the frame it was copying partly
// written over zeros: the payload in any order with the length still zero,
// or the length itself torn. Either ends the segment after the frames
// before it, and nothing of the torn one is read.
func TestJournalTornTailEndsSegment(t *testing.T) {
	before := append(frameOf(t, "a"), frameOf(t, "b")...)
	torn := frameOf(t, "torn")
	zeros := make([]byte, 2*len(torn))
	read := func(name string, tail []byte) {
		t.Helper()
		data := slices.Concat(before, tail, zeros)
		if ids := batchIDs(parseSegment(data)); !slices.Equal(ids, []string{"a", "b"}) {
			t.Fatalf("%s: segment read as %v, want [a b]", name, ids)
		}
	}
	read("zero-filled", nil)
	for k := 4; k <= len(torn); k++ {
		head := slices.Concat(make([]byte, 4), torn[4:k], make([]byte, len(torn)-k))
		read(fmt.Sprintf("payload copied up to byte %d", k), head)
		tail := slices.Concat(make([]byte, k), torn[k:])
		read(fmt.Sprintf("payload copied from the end down to byte %d", k), tail)
	}
	for mask := 1; mask < 15; mask++ { // the length's bytes, some stored
		f := slices.Clone(torn)
		for i := range 4 {
			if mask&(1<<i) == 0 {
				f[i] = 0
			}
		}
		if bytes.Equal(f[:4], torn[:4]) {
			continue // the bytes not stored are zero anyway: the whole length
		}
		read(fmt.Sprintf("length torn (bytes %04b stored)", mask), f)
	}

	// The same on a mapped segment's file: what a kill mid-copy leaves.
	path := filepath.Join(t.TempDir(), "tether.db")
	j := mappedJournal(t, path)
	defer j.close()
	for _, id := range []string{"a", "b"} {
		if _, err := j.append(plainSettlement(id)); err != nil {
			t.Fatal(err)
		}
	}
	copy(j.m[j.size+4:], torn[4:len(torn)/2])
	batches, err := readSegment(segmentPath(path, 1))
	if err != nil {
		t.Fatal(err)
	}
	if ids := batchIDs(batches); !slices.Equal(ids, []string{"a", "b"}) {
		t.Fatalf("mapped segment with a copy cut short read as %v, want [a b]", ids)
	}
}

// A frame never spans two segments: one that does not fit what is left of
// the mapping starts the next segment, and one bigger than a segment gets
// a segment of its own. Replay reads them all, in order.
func TestJournalFramesFitTheirSegment(t *testing.T) {
	path, j := storeWithMappedJournal(t)
	big := strings.Repeat("m", 100_000) // ten to a segment, with room left
	var want []string
	add := func(id, model string) uint64 {
		t.Helper()
		seg, err := j.append([]backend.Settlement{{Entry: row(id, model)}})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, id+"/"+model[:1])
		return seg
	}
	for i := range 11 {
		if seg, wantSeg := add(fmt.Sprintf("big-%02d", i), big), uint64(1+i/10); seg != wantSeg {
			t.Fatalf("frame %d went to segment %d, want %d", i, seg, wantSeg)
		}
	}
	huge := strings.Repeat("h", journalSegmentBytes+1000)
	if seg := add("huge", huge); seg != 3 {
		t.Fatalf("a frame bigger than a segment went to segment %d, want its own, 3", seg)
	}
	if got := len(j.m); got < journalSegmentBytes+1000 {
		t.Fatalf("the segment made for a frame bigger than a segment maps %d bytes", got)
	}
	if seg := add("after", "small"); seg != 4 {
		t.Fatalf("the frame after the big one went to segment %d, want the next, 4", seg)
	}
	if err := j.close(); err != nil {
		t.Fatal(err)
	}
	if ns, _ := segments(path); !slices.Equal(ns, []uint64{1, 2, 3, 4}) {
		t.Fatalf("segments kept = %v, want [1 2 3 4]", ns)
	}

	s := openTemp(t, path)
	defer s.Close()
	var got []string
	for _, r := range ledgerRows(t, s) {
		id, model, _ := strings.Cut(r, "/")
		got = append(got, id+"/"+model[:1])
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ledger rows after the replay:\n%v\nwant\n%v", got, want)
	}
}

// A segment kept by close holds its batches and no zeros past them; one
// whose batches are all committed is removed; and the mapping is released.
func TestJournalCloseReleasesTheMapping(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tether.db")
	j := mappedJournal(t, path)
	sts := plainSettlement("a")
	frame, err := encodeFrame(sts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.append(sts); err != nil {
		t.Fatal(err)
	}
	// mapped reports whether the segment is in the process's mappings
	// (where /proc/self/maps lists them).
	mapped := func() (bool, error) {
		maps, err := os.ReadFile("/proc/self/maps")
		return bytes.Contains(maps, []byte(segmentPath(path, 1))), err
	}
	if in, err := mapped(); err == nil && !in {
		t.Fatal("the segment is not in /proc/self/maps while appended to")
	}
	if err := j.close(); err != nil {
		t.Fatal(err)
	}
	if in, err := mapped(); err == nil && in {
		t.Error("the segment is still mapped after close")
	}
	data, err := os.ReadFile(segmentPath(path, 1))
	if err != nil {
		t.Fatalf("the segment holding an uncommitted batch was not kept: %v", err)
	}
	if len(data) != len(frame) {
		t.Errorf("the kept segment is %d bytes, want its one frame's %d", len(data), len(frame))
	}

	j = mappedJournal(t, filepath.Join(t.TempDir(), "tether.db"))
	seg, err := j.append(plainSettlement("b"))
	if err != nil {
		t.Fatal(err)
	}
	j.done(seg)
	if err := j.close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(segmentPath(j.base, seg)); !os.IsNotExist(err) {
		t.Errorf("a segment with every batch committed was kept at close (%v)", err)
	}
}

// A fault on the mapping (here the file cut under it; a full disk that
// cannot back a page is the same) neither ends the process nor loses the
// row: the journal is given up and the settlement is written the
// synchronous way.
func TestJournalFaultFallsBackToSync(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tether.db")
	s := openTemp(t, path)
	defer s.Close()
	if s.jr == nil || s.jr.m == nil {
		t.Skip("no mapped journal here")
	}
	s.group.wait = time.Hour
	if err := s.SettleReservations(t.Context(), plainSettlement("journaled")); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(segmentPath(path, s.jr.seg), 0); err != nil {
		t.Fatal(err)
	}
	before := s.txns.Load()
	if err := s.SettleReservations(t.Context(), plainSettlement("after-fault")); err != nil {
		t.Fatal(err)
	}
	if n := s.txns.Load() - before; n != 1 {
		t.Errorf("the settlement after the fault took %d transactions, want 1 (synchronous)", n)
	}
	if s.jr.err == nil {
		t.Error("the journal is still used after a fault on its mapping")
	}
	if ids := ledgerIDs(t, s); !slices.Equal(ids, []string{"after-fault", "journaled"}) {
		t.Fatalf("ledger = %v, want both rows", ids)
	}
}

// A segment that could not be mapped is appended to with write(2) and
// holds exactly its frames; the next one is mapped again, and replay
// reads both, in order.
func TestJournalUnmappedSegment(t *testing.T) {
	path, j := storeWithMappedJournal(t)
	// What createSegment leaves when mapSegment fails.
	if err := unmapSegment(j.m); err != nil {
		t.Fatal(err)
	}
	j.m = nil
	if err := j.f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	var want []string
	big := strings.Repeat("w", 300_000)
	for i := range 5 { // the fifth one past journalSegmentBytes
		id := fmt.Sprintf("w%d", i)
		if _, err := j.append([]backend.Settlement{{Entry: row(id, big)}}); err != nil {
			t.Fatal(err)
		}
		want = append(want, id)
	}
	if j.seg != 2 || j.m == nil {
		t.Fatalf("after a full unmapped segment the journal appends to segment %d (mapped %v), want 2, mapped", j.seg, j.m != nil)
	}
	fi, err := os.Stat(segmentPath(path, 1))
	if err != nil {
		t.Fatal(err)
	}
	batches, err := readSegment(segmentPath(path, 1))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, b := range batches {
		f, err := encodeFrame(b)
		if err != nil {
			t.Fatal(err)
		}
		n += int64(len(f))
	}
	if len(batches) != 4 || fi.Size() != n {
		t.Fatalf("the unmapped segment is %d bytes holding %d batches, want 4 batches and no more bytes than their %d", fi.Size(), len(batches), n)
	}
	if err := j.close(); err != nil {
		t.Fatal(err)
	}

	s := openTemp(t, path)
	defer s.Close()
	var got []string
	for _, r := range ledgerRows(t, s) {
		id, _, _ := strings.Cut(r, "/")
		got = append(got, id)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ledger rows after the replay = %v, want %v", got, want)
	}
}

// A segment whose batches are all committed becomes the spare and then
// the next segment but one, holding only what is appended to it then:
// none of the batches it held before is read again.
func TestJournalRecyclesCommittedSegments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tether.db")
	j := mappedJournal(t, path)
	at := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	batch := func(i int) []backend.Settlement { // every frame one size
		return []backend.Settlement{{Entry: backend.LedgerEntry{ID: fmt.Sprintf("r%06d", i), Time: at, Principal: "alice", Model: strings.Repeat("m", 1000)}}}
	}
	first, err := os.Stat(segmentPath(path, 1))
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for j.seg < 3 {
		seg, err := j.append(batch(i))
		if err != nil {
			t.Fatal(err)
		}
		j.done(seg)
		i++
	}
	if _, err := os.Stat(segmentPath(path, 1)); !os.IsNotExist(err) {
		t.Fatalf("segment 1, committed, is still there (%v)", err)
	}
	third, err := os.Stat(segmentPath(path, 3))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(first, third) {
		t.Error("segment 3 is not segment 1's file reused")
	}
	batches, err := readSegment(segmentPath(path, 3))
	if err != nil {
		t.Fatal(err)
	}
	if ids := batchIDs(batches); !slices.Equal(ids, []string{fmt.Sprintf("r%06d", i-1)}) {
		t.Fatalf("the reused segment reads as %d batches (%.3v…), want only the one appended to it", len(ids), ids)
	}
	if _, err := os.Stat(sparePath(path)); err != nil {
		t.Fatalf("segment 2, committed, is not the spare: %v", err)
	}
	if err := j.close(); err != nil {
		t.Fatal(err)
	}
	if ns, _ := segments(path); len(ns) != 0 {
		t.Errorf("segments %v left after close with every batch committed", ns)
	}
	if _, err := os.Stat(sparePath(path)); !os.IsNotExist(err) {
		t.Errorf("the spare is left after close (%v)", err)
	}
}
