//go:build unix

package sqlitestore

import (
	"os"
	"syscall"
)

// mapSegment sizes a new segment file to size bytes (sparse: the disk
// holds only the pages written) and maps it shared, so that what is
// copied into the mapping is in the page cache at once, as a write(2)
// would have put it.
func mapSegment(f *os.File, size int) ([]byte, error) {
	if err := f.Truncate(int64(size)); err != nil {
		return nil, err
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		// Left zero-filled, the file still reads as empty (parseSegment)
		// if it cannot be cut back.
		_ = f.Truncate(0)
		return nil, err
	}
	return m, nil
}

// unmapSegment releases a mapping made by mapSegment.
func unmapSegment(m []byte) error {
	return syscall.Munmap(m)
}
