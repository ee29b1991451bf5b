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
// to a journal beside the database, one write(2), and SettleReservations
// returns; the row rides along with the next group transaction (a turn's
// lineage, another caller's settlement), off the answer's path. A process
// killed after the append loses nothing: Open inserts what the journal
// holds before anything reads the store. The journal is as durable as a
// commit in WAL mode with synchronous=NORMAL, which is written to the log
// and not synced either: both survive the process, neither a power cut.
//
// Readers of the ledger (Usage, LedgerEntries) first write what the
// journal holds, so a settlement is visible once SettleReservations has
// returned, as before. Settlements that reserve or move counters keep the
// synchronous way: replaying them would move a counter twice.
//
// A segment file is removed once every batch appended to it has been
// committed and a newer segment is being appended to.

// journalSegmentBytes is the size past which the journal starts a new
// segment.
const journalSegmentBytes = 1 << 20

// journal is the ledger journal of one store.
type journal struct {
	base   string       // the database path; segments are base + "-ledger-<n>"
	unlock func() error // ends this process's ownership (lockJournal)

	mu   sync.Mutex
	f    *os.File // the segment being appended to; nil once closed
	seg  uint64
	size int64
	open map[uint64]int // batches appended to a segment and not committed
	err  error          // a failed append: the journal is no longer used
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
// short or failing its checksum (a write a power cut tore) ends the
// segment: nothing after it was acknowledged.
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
		if uint64(n) > uint64(len(data)-8) || crc32.ChecksumIEEE(data[8:8+n]) != sum {
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
	j := &journal{base: base, seg: next, open: map[uint64]int{}}
	f, err := os.OpenFile(segmentPath(base, next), os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open ledger journal: %w", err)
	}
	j.f = f
	return j, nil
}

// append writes one batch (one write(2)) and returns its segment, which
// done must be told about once the batch is committed.
func (j *journal) append(sts []backend.Settlement) (uint64, error) {
	frame, err := appendBatch(make([]byte, 8, 512), sts)
	if err != nil {
		return 0, err
	}
	payload := frame[8:]
	binary.LittleEndian.PutUint32(frame, uint32(len(payload)))
	binary.LittleEndian.PutUint32(frame[4:], crc32.ChecksumIEEE(payload))

	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return 0, j.err
	}
	if j.f == nil {
		return 0, errJournalClosed
	}
	if j.size >= journalSegmentBytes {
		if err := j.rotate(); err != nil {
			j.err = err
			return 0, err
		}
	}
	if _, err := j.f.Write(frame); err != nil {
		// A partial frame is ignored by readSegment; later appends would
		// follow it, so the journal is given up.
		j.err = fmt.Errorf("append to ledger journal: %w", err)
		return 0, j.err
	}
	j.size += int64(len(frame))
	j.open[j.seg]++
	return j.seg, nil
}

var errJournalClosed = errors.New("ledger journal closed")

// rotate starts the next segment, removing the current one if nothing in
// it waits for a commit. j.mu is held.
func (j *journal) rotate() error {
	f, err := os.OpenFile(segmentPath(j.base, j.seg+1), os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("rotate ledger journal: %w", err)
	}
	old := j.seg
	_ = j.f.Close()
	j.f, j.seg, j.size = f, j.seg+1, 0
	if j.open[old] == 0 {
		delete(j.open, old)
		_ = os.Remove(segmentPath(j.base, old))
	}
	return nil
}

// done records that a batch of segment seg is committed.
func (j *journal) done(seg uint64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.open[seg]--
	if j.open[seg] <= 0 {
		delete(j.open, seg)
		if seg != j.seg || j.f == nil {
			_ = os.Remove(segmentPath(j.base, seg))
		}
	}
}

// pending reports whether a batch appended is not committed yet.
func (j *journal) pending() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.open) > 0
}

// close stops the journal. Its current segment is removed if nothing in
// it waits for a commit; a segment that still does is kept for the next
// Open.
func (j *journal) close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	if j.open[j.seg] == 0 {
		delete(j.open, j.seg)
		if rerr := os.Remove(segmentPath(j.base, j.seg)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
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
