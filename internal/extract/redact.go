package extract

import (
	"math"
	"regexp"
	"strings"
	"unicode"
)

// Redacted replaces every secret Redact finds.
const Redacted = "[REDACTED]"

// secretRule replaces matches of re with repl (regexp.Expand syntax).
// need is a cheap test every match passes (a literal the pattern cannot
// match without; for case-insensitive patterns on the folded text): a text
// that fails it is not scanned by re.
type secretRule struct {
	re   *regexp.Regexp
	repl string
	need func(s string, folded func() string) bool
}

func has(lits ...string) func(string, func() string) bool {
	return func(s string, _ func() string) bool { return containsAny(s, lits) }
}

func hasFolded(lits ...string) func(string, func() string) bool {
	return func(_ string, folded func() string) bool { return containsAny(folded(), lits) }
}

func containsAny(s string, lits []string) bool {
	for _, l := range lits {
		if strings.Contains(s, l) {
			return true
		}
	}
	return false
}

// fold lower-cases s as the (?i) patterns compare: Unicode simple folding
// also makes U+212A (Kelvin) a k, which ToLower does, and U+017F (long s)
// an s, which it does not.
func fold(s string) string {
	return strings.Map(func(r rune) rune {
		if r == 'ſ' {
			return 's'
		}
		return unicode.ToLower(r)
	}, s)
}

// secretRules run in order: whole blocks first, then provider key formats,
// then generic credential shapes.
var secretRules = []secretRule{
	// PEM private keys (an unterminated block runs to the end).
	{regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)`), Redacted, has("-----BEGIN ")},
	// Anthropic, then OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-).
	{regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_\-]{8,}`), Redacted, has("sk-ant-")},
	{regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{16,}`), Redacted, has("sk-")},
	// AWS access key ids.
	{regexp.MustCompile(`\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}\b`), Redacted,
		has("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA", "ABIA", "ACCA")},
	// GitHub tokens.
	{regexp.MustCompile(`\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}`), Redacted, has("ghp_", "gho_", "ghu_", "ghs_", "ghr_")},
	{regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`), Redacted, has("github_pat_")},
	// Slack tokens.
	{regexp.MustCompile(`\bxox[bpars]-[A-Za-z0-9\-]{10,}`), Redacted, has("xox")},
	// Google API keys.
	{regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{30,}`), Redacted, has("AIza")},
	// Stripe secret and restricted keys.
	{regexp.MustCompile(`\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}`), Redacted, has("k_live_", "k_test_")},
	// JWTs.
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]{4,}`), Redacted, has("eyJ")},
	// Authorization schemes.
	{regexp.MustCompile(`(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9._~+/\-]{12,}=*`), "${1}${2}" + Redacted, hasFolded("bearer", "basic", "token")},
	// Passwords in URLs: scheme://user:pass@host.
	{regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.\-]*://[^\s:/@]*:)[^\s@/]+@`), "${1}" + Redacted + "@",
		func(s string, _ func() string) bool { return strings.Contains(s, "://") && strings.Contains(s, "@") }},
	// NAME=secret, name: secret, "api_key": "secret" and the like.
	{regexp.MustCompile(`(?i)\b([A-Za-z0-9_.\-]*(?:password|passwd|pwd|passphrase|secret|token|api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key|client[_\-]?secret|credentials?|auth[_\-]?key|session[_\-]?key)["']?)(\s*[:=]\s*)(["']?)([^\s"'\x60,;]{4,})`), "${1}${2}${3}" + Redacted,
		func(s string, folded func() string) bool {
			return strings.ContainsAny(s, ":=") && containsAny(folded(), []string{"pass", "pwd", "secret", "token", "key", "credential"})
		}},
}

// entropyCandidate matches long runs of hex or base64 characters.
var entropyCandidate = regexp.MustCompile(`[A-Za-z0-9+/_\-]{32,}={0,2}`)

// Redact replaces credentials and other secrets in s with [REDACTED]: the
// key formats of OpenAI, Anthropic, AWS, GitHub, Slack, Google and Stripe,
// bearer/basic tokens, JWTs, PEM private keys, passwords in URLs,
// NAME=secret and "password: …" assignments, and long high-entropy hex or
// base64 strings. It errs on the side of removing too much.
func Redact(s string) string {
	folded, stale := "", true
	lower := func() string {
		if stale {
			folded, stale = fold(s), false
		}
		return folded
	}
	for _, r := range secretRules {
		if !r.need(s, lower) {
			continue
		}
		if r.repl == Redacted {
			s = r.re.ReplaceAllLiteralString(s, Redacted)
		} else {
			s = r.re.ReplaceAllString(s, r.repl)
		}
		stale = true
	}
	if !hasRun(s, 32) {
		return s
	}
	return entropyCandidate.ReplaceAllStringFunc(s, func(m string) string {
		if looksRandom(m) {
			return Redacted
		}
		return m
	})
}

// hasRun reports whether s has n bytes in a row that entropyCandidate's
// class admits (the least any of its matches has).
func hasRun(s string, n int) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '+', c == '/', c == '_', c == '-':
			if run++; run >= n {
				return true
			}
		default:
			run = 0
		}
	}
	return false
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
