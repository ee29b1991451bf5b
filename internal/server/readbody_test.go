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
			got, err := readBody(r, declared, 1<<20)
			if err != nil || string(got) != body {
				t.Fatalf("declared %d, slow %v: %d bytes, %v; want %d bytes", declared, slow, len(got), err, len(body))
			}
		}
	}
	w := httptest.NewRecorder()
	_, err := readBody(http.MaxBytesReader(w, io.NopCloser(bytes.NewReader([]byte(body))), 1000), int64(len(body)), 1000)
	var mbe *http.MaxBytesError
	if !errors.As(err, &mbe) {
		t.Fatalf("over the limit: %v, want a MaxBytesError", err)
	}
	_, err = readBody(http.MaxBytesReader(w, io.NopCloser(bytes.NewReader([]byte(body))), 1000), 10, 1000)
	if !errors.As(err, &mbe) {
		t.Fatalf("over the limit, declared short: %v, want a MaxBytesError", err)
	}
}

// A caller's Content-Length is a claim, not a reservation: declaring the
// largest allowed body and sending ten bytes holds a small buffer, and the
// buffer never grows past four times what arrived before the claim is reached.
func TestReadBodyDoesNotTrustDeclaredLength(t *testing.T) {
	got, err := readBody(strings.NewReader("0123456789"), 32<<20, 32<<20)
	if err != nil || string(got) != "0123456789" {
		t.Fatalf("got %q, %v", got, err)
	}
	if cap(got) > firstBodyChunk {
		t.Fatalf("ten bytes sent, %d bytes held for a declared 32 MiB", cap(got))
	}
	body := strings.Repeat("x", 300<<10)
	got, err = readBody(strings.NewReader(body), 32<<20, 32<<20)
	if err != nil || len(got) != len(body) {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
	if cap(got) > 4*len(body) {
		t.Fatalf("%d bytes sent, %d bytes held", len(body), cap(got))
	}
}
