package server

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
)

// readBody reads exactly the body whatever Content-Length claims: the
// declared length only sizes the buffer. A body longer or shorter than
// declared, one read a byte at a time, an unknown length, and a body over
// the limit (the MaxBytesReader's error) all read as io.ReadAll reads them.
func TestReadBodyIgnoresWrongContentLength(t *testing.T) {
	body := strings.Repeat(`{"role":"user","content":"x"},`, 5000)
	for _, declared := range []int64{-1, 0, 1, int64(len(body)) - 7, int64(len(body)), int64(len(body)) + 100} {
		for _, slow := range []bool{false, true} {
			var r io.Reader = strings.NewReader(body)
			if slow {
				r = iotest.OneByteReader(r)
			}
			got, _, err := readBody(r, declared, 1<<20)
			if err != nil || string(got) != body {
				t.Fatalf("declared %d, slow %v: %d bytes, %v; want %d bytes", declared, slow, len(got), err, len(body))
			}
		}
	}
	w := httptest.NewRecorder()
	_, _, err := readBody(http.MaxBytesReader(w, io.NopCloser(bytes.NewReader([]byte(body))), 1000), int64(len(body)), 1000)
	var mbe *http.MaxBytesError
	if !errors.As(err, &mbe) {
		t.Fatalf("over the limit: %v, want a MaxBytesError", err)
	}
	_, _, err = readBody(http.MaxBytesReader(w, io.NopCloser(bytes.NewReader([]byte(body))), 1000), 10, 1000)
	if !errors.As(err, &mbe) {
		t.Fatalf("over the limit, declared short: %v, want a MaxBytesError", err)
	}
}

// A caller's Content-Length is a claim, not a reservation: declaring the
// largest allowed body and sending ten bytes holds a small buffer, and the
// buffer never grows past four times what arrived before the claim is reached.
func TestReadBodyDoesNotTrustDeclaredLength(t *testing.T) {
	got, _, err := readBody(strings.NewReader("0123456789"), 32<<20, 32<<20)
	if err != nil || string(got) != "0123456789" {
		t.Fatalf("got %q, %v", got, err)
	}
	if cap(got) > firstBodyChunk {
		t.Fatalf("ten bytes sent, %d bytes held for a declared 32 MiB", cap(got))
	}
	body := strings.Repeat("x", 300<<10)
	got, _, err = readBody(strings.NewReader(body), 32<<20, 32<<20)
	if err != nil || len(got) != len(body) {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
	if cap(got) > 4*len(body) {
		t.Fatalf("%d bytes sent, %d bytes held", len(body), cap(got))
	}
}

// An agent's history (a claim up to trustedBody) is read into one lent
// buffer of at least the declared length: no copy on the way, and once
// the buffer is back, the next body of its size allocates nothing.
func TestReadBodyAllocatesAnHonestClaimOnce(t *testing.T) {
	body := strings.Repeat("x", 300<<10)
	sr := strings.NewReader(body)
	r := iotest.HalfReader(sr)
	allocs := testing.AllocsPerRun(10, func() {
		sr.Reset(body)
		got, lent, err := readBody(r, int64(len(body)), 32<<20)
		if err != nil || string(got) != body {
			t.Fatalf("%d bytes, %v", len(got), err)
		}
		if lent == nil || &lent.buf[:1][0] != &got[:1][0] {
			t.Fatalf("a %d-byte body was not read into a lent buffer", len(body))
		}
		lent.release()
	})
	// A fresh lent buffer is two allocations (the buffer and its record);
	// reused, none. sync.Pool may drop a buffer now and then (a collection,
	// or at random under the race detector), so the average is below two,
	// not zero.
	if allocs >= 2 {
		t.Fatalf("a %d-byte body declared as such took %v allocations with its buffer returned: its buffer is not reused", len(body), allocs)
	}
	if n := trusted.Load(); n != 0 {
		t.Fatalf("%d bytes still counted as allocated for bodies under way", n)
	}
}

// Claims allocated before their bodies arrive are bounded for the whole
// process: callers that each declare trustedBody and send nothing get the
// whole buffer only while trustBudget lasts, the rest firstBodyChunk.
func TestReadBodyTrustIsBounded(t *testing.T) {
	const callers = 2 * trustBudget / trustedBody
	type result struct {
		cap int
		err error
	}
	ws := make([]*io.PipeWriter, callers)
	out := make(chan result, callers)
	for i := range ws {
		pr, pw := io.Pipe()
		ws[i] = pw
		go func() {
			got, _, err := readBody(pr, trustedBody-1, 32<<20)
			out <- result{cap(got), err}
		}()
	}
	// Every caller is waiting for its first byte, holding its buffer.
	for _, w := range ws {
		if _, err := w.Write([]byte("0")); err != nil {
			t.Fatal(err)
		}
	}
	if n := trusted.Load(); n > trustBudget {
		t.Fatalf("%d bytes allocated for bodies not sent, over the %d budget", n, trustBudget)
	}
	for _, w := range ws {
		_ = w.Close()
	}
	whole := 0
	for range callers {
		r := <-out
		if r.err != nil {
			t.Fatal(r.err)
		}
		switch r.cap {
		case trustedBody:
			whole++
		case firstBodyChunk:
		default:
			t.Fatalf("a buffer of %d bytes for one byte sent", r.cap)
		}
	}
	if whole == 0 || whole > trustBudget/trustedBody {
		t.Fatalf("%d of %d callers got the whole declared buffer, want 1 to %d", whole, callers, trustBudget/trustedBody)
	}
	if n := trusted.Load(); n != 0 {
		t.Fatalf("%d bytes still counted after every read ended", n)
	}
}
