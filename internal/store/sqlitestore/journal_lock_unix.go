//go:build unix

package sqlitestore

import (
	"errors"
	"os"
	"syscall"
)

// lockJournal makes this process the journal's owner: an exclusive flock
// on base + "-ledger.lock", held until release and dropped by the kernel
// if the process dies. Another process opening the same database (the
// capsule inspection command, a second server by mistake) is not the
// owner: it neither replays nor removes the owner's segments, and settles
// the synchronous way.
func lockJournal(base string) (release func() error, owner bool, err error) {
	f, err := os.OpenFile(base+"-ledger.lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return f.Close, true, nil
}
