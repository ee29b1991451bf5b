package tokens

import "testing"

func TestEstimate(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"abcd", 1},
		{"abcde", 2},
		{"a b c d e f g h", 8}, // word floor beats 15/4
		{"日本語", 3},             // one token per non-ASCII rune
		{"use sqlite, not postgres", 6},
	}
	for _, tc := range tests {
		if got := Estimate(tc.in); got != tc.want {
			t.Errorf("Estimate(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestEstimateSize(t *testing.T) {
	for n, want := range map[int64]int64{0: 0, 1: 1, 4: 1, 5: 2, 400: 100, -3: 0} {
		if got := EstimateSize(n); got != want {
			t.Errorf("EstimateSize(%d) = %d, want %d", n, got, want)
		}
	}
}
