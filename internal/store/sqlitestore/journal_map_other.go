//go:build !unix

package sqlitestore

import (
	"errors"
	"os"
)

// mapSegment: segments are appended to with write(2) here (and no process
// owns a journal without flock anyway, see lockJournal).
func mapSegment(*os.File, int) ([]byte, error) {
	return nil, errors.ErrUnsupported
}

func unmapSegment([]byte) error { return nil }
