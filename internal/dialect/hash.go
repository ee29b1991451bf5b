package dialect

import (
	"hash/maphash"
	"unsafe"
)

// hashBytes is a seeded 64-bit hash of b, the same function as
// maphash.Bytes in kind (the runtime's keyed hash, AES-based where the CPU
// has it) but made in one call over all of b: maphash.Bytes feeds the
// runtime 128 bytes a call, which over a 200 KiB agent history, hashed on
// every request, costs four times as much. The value is only ever compared
// within this process, never stored.
func hashBytes(seed maphash.Seed, b []byte) uint64 {
	// The string shares b's bytes; it is hashed and dropped, never kept.
	return maphash.Comparable(seed, unsafe.String(unsafe.SliceData(b), len(b)))
}
