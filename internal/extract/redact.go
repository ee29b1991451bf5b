package extract

import (
	"math"
	"regexp"
	"strings"
)

// Redacted replaces every secret Redact finds.
const Redacted = "[REDACTED]"

// secretRule replaces matches of re with repl (regexp.Expand syntax).
type secretRule struct {
	re   *regexp.Regexp
	repl string
}

// secretRules run in order: whole blocks first, then provider key formats,
// then generic credential shapes.
var secretRules = []secretRule{
	// PEM private keys (an unterminated block runs to the end).
	{regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`), Redacted},
	// Anthropic, then OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-).
	{regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_\-]{8,}`), Redacted},
	{regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{16,}`), Redacted},
	// AWS access key ids.
	{regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}\b`), Redacted},
	// GitHub tokens.
	{regexp.MustCompile(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}`), Redacted},
	{regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`), Redacted},
	// Slack tokens.
	{regexp.MustCompile(`\bxox[bpars]-[A-Za-z0-9\-]{10,}`), Redacted},
	// Google API keys.
	{regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{30,}`), Redacted},
	// Stripe secret and restricted keys.
	{regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}`), Redacted},
	// JWTs.
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}`), Redacted},
	// Authorization schemes.
	{regexp.MustCompile(`(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/\-]{12,}=*`), "${1}${2}" + Redacted},
	// Passwords in URLs: scheme://user:pass@host.
	{regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]*:)[^\s@/]+@`), "${1}" + Redacted + "@"},
	// NAME=secret, name: secret, "api_key": "secret" and the like.
	{regexp.MustCompile(`(?i)\b([A-Za-z0-9_.\-]*(?:password|passwd|pwd|passphrase|secret|token|api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key|client[_\-]?secret|credentials?|auth[_\-]?key|session[_\-]?key)["']?)(\s*[:=]\s*)(["']?)([^\s"'\x60,;]{4,})`), "${1}${2}${3}" + Redacted},
}

// entropyCandidate matches long runs of hex or base64 characters.
var entropyCandidate = regexp.MustCompile(`[A-Za-z0-9+/_\-]{32,}={0,2}`)

// Redact replaces credentials and other secrets in s with [REDACTED]: the
// key formats of OpenAI, Anthropic, AWS, GitHub, Slack, Google and Stripe,
// bearer/basic tokens, JWTs, PEM private keys, passwords in URLs,
// NAME=secret and "password: …" assignments, and long high-entropy hex or
// base64 strings. It errs on the side of removing too much.
func Redact(s string) string {
	for _, r := range secretRules {
		if r.repl == Redacted {
			s = r.re.ReplaceAllLiteralString(s, Redacted)
			continue
		}
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return entropyCandidate.ReplaceAllStringFunc(s, func(m string) string {
		if looksRandom(m) {
			return Redacted
		}
		return m
	})
}

// looksRandom reports whether a long token looks like key material rather
// than an identifier or a path: long hex, or base64 with digits spread
// through it and high character entropy.
func looksRandom(m string) bool {
	core := strings.TrimRight(m, "=")
	if isHex(core) {
		return len(core) >= 32
	}
	var upper, lower, digit int
	for i := 0; i < len(core); i++ {
		switch c := core[i]; {
		case c >= 'A' && c <= 'Z':
			upper++
		case c >= 'a' && c <= 'z':
			lower++
		case c >= '0' && c <= '9':
			digit++
		}
	}
	if upper == 0 || lower == 0 || digit < 3 || float64(digit) < 0.06*float64(len(core)) {
		return false
	}
	if strings.Count(core, "/") > 2 { // a path
		return false
	}
	return entropy(core) >= 4.0
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var freq [256]int
	for i := 0; i < len(s); i++ {
		freq[s[i]]++
	}
	h := 0.0
	n := float64(len(s))
	for _, f := range freq {
		if f > 0 {
			p := float64(f) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}
