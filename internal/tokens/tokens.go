// Package tokens is Tether's one token estimator: how many tokens a model
// needs for some text, offline and without a tokenizer. Budgets, capsule
// bounds and extractor input limits all count with it.
package tokens

import (
	"unicode"
	"unicode/utf8"
)

// Estimate estimates the tokens a model needs for s, conservatively: one
// token per 4 ASCII bytes (rounded up) plus one token per non-ASCII rune
// (CJK, emoji and accented text tokenise densely), and never fewer tokens
// than whitespace-separated words.
func Estimate(s string) int {
	ascii, other, words := 0, 0, 0
	inWord := false
	for _, r := range s {
		if r < utf8.RuneSelf {
			ascii++
		} else {
			other++
		}
		if unicode.IsSpace(r) {
			inWord = false
		} else if !inWord {
			inWord = true
			words++
		}
	}
	return max((ascii+3)/4+other, words)
}

// EstimateSize estimates the tokens of text known only by its size in
// bytes: one token per 4 bytes, rounded up, which is what Estimate gives
// for ASCII text of ordinary words. It is for a request body on the path to
// the first byte, which the proxy must not scan once more to count; JSON
// punctuation and field names make it an overestimate for the text inside.
func EstimateSize(n int64) int64 { return (max(n, 0) + 3) / 4 }
