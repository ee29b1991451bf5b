package sqlitestore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tether-dev/tether/internal/store/backend"
)

// The settlement of a call no budget applies to (no reservation row, no
// counter to move) is one ledger row, inserted with ON CONFLICT (id) DO
// NOTHING: writing it twice is writing it once. Such a batch is appended
// to a journal beside the database (a copy into the current segment's
// shared mapping, no system call: the bytes are in the page cache, where
// a write(2) would have put them; one write(2) where a segment cannot be
// mapped), and SettleReservations returns; the row rides along with the
// next group transaction (a turn's lineage, another caller's settlement),
// off the answer's path. A process killed after the append loses
// nothing: Open inserts what the journal holds before anything reads the
// store. The journal is as durable as a commit in WAL mode with
// synchronous=NORMAL, which is written to the log and not synced either:
// both survive the process, neither a power cut.
//
// Readers of the ledger (Usage, LedgerEntries) first write what the
// journal holds, so a settlement is visible once SettleReservations has
// returned, as before. Settlements that reserve or move counters keep the
// synchronous way: replaying them would move a counter twice.
//
// A segment file is removed (or becomes the spare, see below) once every
// batch appended to it has been committed and a newer segment is being
// appended to.
//
// A mapped segment is a file of journalSegmentBytes, zero-filled (sparse)
// past what was appended; a batch never spans two segments. A frame's
// length is copied last, so a process killed mid-copy leaves a zero
// length, which ends the segment as the unwritten rest does (and a length
// torn mid-store fails the checksum). A fault on the mapping (a full disk
// that cannot back a page, a file cut under it) gives the journal up, as
// a failed write(2) does: that batch and the later ones are written the
// synchronous way. A segment whose batches are all committed is kept
// mapped, renamed out of the journal, and zeroed and renamed back as the
// next segment: on a VM a first write to a freshly mapped page costs more
// than the write(2) it saves (see rotate).

// journalSegmentBytes is the size of a mapped segment, and the size past
// which a segment appended to with write(2) is followed by a new one. A
// batch bigger than that gets a mapped segment of its own size.
const journalSegmentBytes = 1 << 20

// journal is the ledger journal of one store.
type journal struct {
	base   string       // the database path; segments are base + "-ledger-<n>"
	unlock func() error // ends this process's ownership (lockJournal)

	mu   sync.Mutex
	f    *os.File // the segment being appended to; nil once closed
	m    []byte   // f mapped shared; nil if appended to with write(2)
	seg  uint64
	size int64          // bytes appended to the segment
	open map[uint64]int // batches appended to a segment and not committed
	err  error          // a failed append: the journal is no longer used

	held  map[uint64]mappedSegment // segments retired mapped, until committed
	spare mappedSegment            // a committed segment, for the next rotate
}

// journalable reports whether every settlement of a batch is a plain
// ledger row.
func journalable(sts []backend.Settlement) bool {
	for _, st := range sts {
		if st.ReservationID != "" || len(st.Adjust) > 0 {
			return false
		}
	}
	return true
}

func segmentPath(base string, n uint64) string {
	return base + "-ledger-" + strconv.FormatUint(n, 10)
}

// segments returns the journal's segment numbers beside base, in order.
func segments(base string) ([]uint64, error) {
	names, err := filepath.Glob(base + "-ledger-*")
	if err != nil {
		return nil, err
	}
	var ns []uint64
	for _, name := range names {
		n, err := strconv.ParseUint(strings.TrimPrefix(name, base+"-ledger-"), 10, 64)
		if err == nil {
			ns = append(ns, n)
		}
	}
	slices.Sort(ns)
	return ns, nil
}

// readSegment returns the batches of one segment, in order. A frame cut
// short or failing its checksum (a write a power cut tore), or a zero
// length (the unwritten rest of a mapped segment, a copy a kill cut
// short) ends the segment: nothing after it was acknowledged.
func readSegment(path string) ([][]backend.Settlement, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseSegment(data), nil
}

// parseSegment returns the batches of a segment's bytes (see readSegment).
func parseSegment(data []byte) [][]backend.Settlement {
	var out [][]backend.Settlement
	for len(data) >= 8 {
		n := binary.LittleEndian.Uint32(data)
		sum := binary.LittleEndian.Uint32(data[4:])
		if n == 0 || uint64(n) > uint64(len(data)-8) || crc32.ChecksumIEEE(data[8:8+n]) != sum {
			break
		}
		var sts []backend.Settlement
		if err := json.Unmarshal(data[8:8+n], &sts); err != nil || backend.CheckSettlements(sts) != nil || !journalable(sts) {
			break
		}
		out = append(out, sts)
		data = data[8+n:]
	}
	return out
}

// newJournal starts the journal at segment next.
func newJournal(base string, next uint64) (*journal, error) {
	f, m, err := createSegment(base, next, journalSegmentBytes)
	if err != nil {
		return nil, fmt.Errorf("open ledger journal: %w", err)
	}
	return &journal{base: base, f: f, m: m, seg: next, open: map[uint64]int{}, held: map[uint64]mappedSegment{}}, nil
}

// createSegment creates segment n of the journal beside base, mapped with
// room for size bytes if it can be (see mapSegment); if not, m is nil and
// the segment is appended to with write(2).
func createSegment(base string, n uint64, size int) (f *os.File, m []byte, err error) {
	f, err = os.OpenFile(segmentPath(base, n), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, nil, err
	}
	m, err = mapSegment(f, size)
	if err != nil {
		return f, nil, nil
	}
	return f, m, nil
}

// encodeFrame returns a batch's frame: its length and checksum, then its
// JSON (appendBatch).
func encodeFrame(sts []backend.Settlement) ([]byte, error) {
	frame, err := appendBatch(make([]byte, 8, 512), sts)
	if err != nil {
		return nil, err
	}
	payload := frame[8:]
	binary.LittleEndian.PutUint32(frame, uint32(len(payload)))
	binary.LittleEndian.PutUint32(frame[4:], crc32.ChecksumIEEE(payload))
	return frame, nil
}

// append appends one batch (a copy into the mapping, or one write(2)) and
// returns its segment, which done must be told about once the batch is
// committed.
func (j *journal) append(sts []backend.Settlement) (uint64, error) {
	frame, err := encodeFrame(sts)
	if err != nil {
		return 0, err
	}

	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return 0, j.err
	}
	if j.f == nil {
		return 0, errJournalClosed
	}
	if !j.fits(len(frame)) {
		if err := j.rotate(len(frame)); err != nil {
			j.err = err
			return 0, err
		}
	}
	if err := j.put(frame); err != nil {
		// A partial frame ends its segment for readSegment; later appends
		// would follow it, so the journal is given up.
		j.err = fmt.Errorf("append to ledger journal: %w", err)
		return 0, j.err
	}
	j.size += int64(len(frame))
	j.open[j.seg]++
	return j.seg, nil
}

var errJournalClosed = errors.New("ledger journal closed")

// fits reports whether a frame of n bytes goes in the current segment:
// in what is left of its mapping (a frame never spans two), or, appended
// to with write(2), while the segment is under its size. j.mu is held.
func (j *journal) fits(n int) bool {
	if j.m != nil {
		return j.size+int64(n) <= int64(len(j.m))
	}
	return j.size < journalSegmentBytes
}

// put appends a frame to the current segment. j.mu is held.
func (j *journal) put(frame []byte) error {
	if j.m == nil {
		_, err := j.f.Write(frame)
		return err
	}
	dst := j.m[j.size:]
	return guardFault(func() {
		copy(dst[4:len(frame)], frame[4:])
		copy(dst[:4], frame[:4]) // the length last (see journal)
	})
}

// guardFault runs fn, which writes to a mapping, and returns a fault on
// the mapping as an error instead of ending the process.
func guardFault(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fault, ok := r.(interface{ Addr() uintptr })
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("fault at %#x on a segment's mapping", fault.Addr())
		}
	}()
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	fn()
	return nil
}

// mappedSegment is a segment's file and mapping, kept past its turn as the
// current segment.
type mappedSegment struct {
	f    *os.File
	m    []byte
	size int64 // bytes appended
}

// sparePath is where a committed segment waits to be the next one. Its
// name is not a segment's: the journal never reads it.
func sparePath(base string) string { return base + "-ledger-spare" }

// rotate starts the next segment, with room for a frame of n bytes, and
// retires the current one. The next segment is the spare if there is one
// big enough: its pages are mapped already, where a new file's would cost
// a page fault each on the first append to them. j.mu is held.
func (j *journal) rotate(n int) error {
	f, m := j.reuseSpare(j.seg+1, n)
	if f == nil {
		var err error
		if f, m, err = createSegment(j.base, j.seg+1, max(n, journalSegmentBytes)); err != nil {
			return fmt.Errorf("rotate ledger journal: %w", err)
		}
	}
	_ = j.retire()
	j.f, j.m, j.seg, j.size = f, m, j.seg+1, 0
	return nil
}

// reuseSpare makes the spare segment seg if it has room for n bytes:
// zeroed first (it holds batches committed), then renamed, so that a file
// named as a segment never holds them. It returns a nil file if there is
// no spare to use. j.mu is held.
func (j *journal) reuseSpare(seg uint64, n int) (*os.File, []byte) {
	sp := j.spare
	if sp.f == nil || n > len(sp.m) {
		return nil, nil
	}
	j.spare = mappedSegment{}
	err := guardFault(func() { clear(sp.m[:sp.size]) })
	if err == nil {
		err = os.Rename(sparePath(j.base), segmentPath(j.base, seg))
	}
	if err != nil {
		_ = releaseSegment(sp, sparePath(j.base), false)
		return nil, nil // a new file instead
	}
	return sp.f, sp.m
}

// retire stops appending to the current segment. A mapped one whose
// batches are not all committed stays mapped until they are (see done);
// otherwise it is released as releaseSegment does. j.mu is held.
func (j *journal) retire() error {
	cur := mappedSegment{f: j.f, m: j.m, size: j.size}
	j.m = nil
	if j.open[j.seg] == 0 {
		delete(j.open, j.seg)
		return j.recycle(j.seg, cur)
	}
	if cur.m != nil {
		j.held[j.seg] = cur
		return nil
	}
	return cur.f.Close()
}

// recycle disposes of a segment whose batches are all committed: kept as
// the spare (see rotate) if it is a mapped segment of the usual size and
// there is none yet, removed otherwise. j.mu is held.
func (j *journal) recycle(seg uint64, sf mappedSegment) error {
	if len(sf.m) == journalSegmentBytes && j.spare.f == nil && j.f != nil {
		if err := os.Rename(segmentPath(j.base, seg), sparePath(j.base)); err == nil {
			j.spare = sf
			return nil
		}
	}
	return releaseSegment(sf, segmentPath(j.base, seg), false)
}

// releaseSegment unmaps and closes a segment's file at path and removes
// it, or, if keep, cuts it to what was appended (the next Open reads no
// zeros past it, and the file is no bigger than its batches).
func releaseSegment(sf mappedSegment, path string, keep bool) error {
	var err error
	if sf.m != nil {
		err = unmapSegment(sf.m)
		if keep {
			err = errors.Join(err, sf.f.Truncate(sf.size))
		}
	}
	err = errors.Join(err, sf.f.Close())
	if !keep {
		if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// done records that a batch of segment seg is committed.
func (j *journal) done(seg uint64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.open[seg]--
	if j.open[seg] > 0 {
		return
	}
	delete(j.open, seg)
	if seg == j.seg && j.f != nil {
		return // still appended to
	}
	if sf, ok := j.held[seg]; ok {
		delete(j.held, seg)
		_ = j.recycle(seg, sf)
		return
	}
	_ = os.Remove(segmentPath(j.base, seg))
}

// pending reports whether a batch appended is not committed yet.
func (j *journal) pending() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.open) > 0
}

// close stops the journal and releases its files and mappings. Its current
// segment is removed if nothing in it waits for a commit; a segment that
// still does is kept for the next Open.
func (j *journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	cur := mappedSegment{f: j.f, m: j.m, size: j.size}
	j.f, j.m = nil, nil
	keep := j.open[j.seg] > 0
	if !keep {
		delete(j.open, j.seg)
	}
	err := releaseSegment(cur, segmentPath(j.base, j.seg), keep)
	for seg, sf := range j.held {
		delete(j.held, seg)
		err = errors.Join(err, releaseSegment(sf, segmentPath(j.base, seg), true))
	}
	if j.spare.f != nil {
		err = errors.Join(err, releaseSegment(j.spare, sparePath(j.base), false))
		j.spare = mappedSegment{}
	}
	return err
}

// openJournal makes the store the owner of the journal beside path, if no
// other process is, replays what it holds and starts a new segment. A
// store that is not the owner has no journal.
func (s *Store) openJournal(ctx context.Context, path string) error {
	unlock, owner, err := lockJournal(path)
	if err != nil || !owner {
		return err
	}
	next, err := s.replayJournal(ctx, path)
	if err == nil {
		s.jr, err = newJournal(path, next)
	}
	if err != nil {
		_ = unlock()
		return err
	}
	s.jr.unlock = unlock
	return nil
}

// replayJournal inserts what the journal beside base holds (a process that
// died left it), removes its segments and returns the number the journal
// goes on from.
func (s *Store) replayJournal(ctx context.Context, base string) (uint64, error) {
	// A spare left holds only batches committed (see reuseSpare).
	if err := os.Remove(sparePath(base)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("replay ledger journal: %w", err)
	}
	ns, err := segments(base)
	if err != nil || len(ns) == 0 {
		return 0, err
	}
	var all []backend.Settlement
	for _, n := range ns {
		batches, err := readSegment(segmentPath(base, n))
		if err != nil {
			return 0, fmt.Errorf("read ledger journal: %w", err)
		}
		for _, b := range batches {
			all = append(all, b...)
		}
	}
	if len(all) > 0 {
		err := s.write(ctx, func(t *writeTx) error { return settleIn(t, all) })
		if err != nil {
			return 0, fmt.Errorf("replay ledger journal: %w", err)
		}
	}
	for _, n := range ns {
		if err := os.Remove(segmentPath(base, n)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("replay ledger journal: %w", err)
		}
	}
	return ns[len(ns)-1] + 1, nil
}

// settleJournaled appends a batch of plain ledger rows to the journal and
// queues their insert to ride along with the next group transaction. It
// reports false if the journal cannot take them (the caller writes them
// the synchronous way).
func (s *Store) settleJournaled(sts []backend.Settlement) bool {
	if s.jr == nil || !journalable(sts) {
		return false
	}
	seg, err := s.jr.append(sts)
	if err != nil {
		return false
	}
	s.rideJournaled(seg, sts)
	return true
}

// rideJournaled queues a journaled batch; a transaction that fails queues
// it again a second later (the journal keeps it meanwhile, and across a
// restart).
func (s *Store) rideJournaled(seg uint64, sts []backend.Settlement) {
	s.enqueueThen(func(t *writeTx) error { return settleIn(t, sts) }, func(err error) {
		if err == nil {
			s.jr.done(seg)
			return
		}
		time.AfterFunc(time.Second, func() {
			if !s.closed.Load() {
				s.rideJournaled(seg, sts)
			}
		})
	})
}

// awaitJournal writes the journaled settlements queued so far before a
// read of the ledger, so that a settlement is read once it has returned.
func (s *Store) awaitJournal(ctx context.Context) {
	if s.jr != nil && s.jr.pending() {
		_ = s.grouped(ctx, func(*writeTx) error { return nil })
	}
}
