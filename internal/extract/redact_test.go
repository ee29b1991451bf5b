package extract

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name, in, secret string // secret must be gone; the rest of in should mostly survive
		keep             string // must survive
	}{
		{"openai", "key is sk-abcdefghijklmnopqrstuvwxyz012345 ok", "sk-abcdefghijklmnopqrstuvwxyz012345", "key is"},
		{"openai project", "sk-proj-AbC_dEf-1234567890abcdefghijKLMNOP", "AbC_dEf-1234567890", ""},
		{"anthropic", "ANTHROPIC: sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_xyz", "api03-AbCdEf", "ANTHROPIC"},
		{"aws access key", "aws AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE", "here"},
		{"aws secret key", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI", "aws_secret_access_key"},
		{"github classic", "token ghp_1234567890abcdefghijABCDEFGHIJ123456", "ghp_1234567890abcdefghij", ""},
		{"github oauth", "gho_16C7e42F292c6912E7710c838347Ae178B4a", "gho_16C7e42F292c6912E7710c838347Ae178B4a", ""},
		{"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github_pat_11ABCDEFG", ""},
		{"slack", "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "xoxb-1234567890", ""},
		{"google", "AIzaSyD-1234567890abcdefghijklmnopqrstu", "AIzaSyD-1234567890", ""},
		{"stripe live", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", ""},
		{"stripe restricted", "rk_live_51H8abcdefghijklmnop", "rk_live_51H8abcdefghijklmnop", ""},
		{"bearer", "Authorization: Bearer abc.def-ghi_jkl~mnopqrstu", "abc.def-ghi_jkl~mnopqrstu", "Authorization: Bearer"},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "eyJzdWIiOiIxMjM0NTY3ODkwIn0", ""},
		{"pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\nabc\n-----END RSA PRIVATE KEY-----\nafter", "MIIEpAIBAAKCAQEA", "after"},
		{"url password", "DATABASE_URL=postgres://app:s3cr3tPass@db:5432/inv", "s3cr3tPass", "postgres://app:"},
		{"env assignment", "DB_PASSWORD=hunter2hunter2\nPORT=8080", "hunter2hunter2", "PORT=8080"},
		{"yaml password", "password: correct-horse-battery", "correct-horse-battery", "password:"},
		{"json api key", `{"api_key": "abcd1234efgh"}`, "abcd1234efgh", "api_key"},
		{"long hex", "digest 3f786850e387550fdab836ed7e6dc881de23001b3f786850", "3f786850e387550fdab836ed7e6dc881de23001b", "digest"},
		{"random base64", "blob Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MEFCQ0RFRkdISUpLTE1OT1A=", "Zm9vYmFyYmF6cXV4MTIzNDU2", "blob"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Redact(tc.in)
			if strings.Contains(got, tc.secret) {
				t.Errorf("Redact(%q) = %q: secret %q still present", tc.in, got, tc.secret)
			}
			if !strings.Contains(got, Redacted) {
				t.Errorf("Redact(%q) = %q: no %s marker", tc.in, got, Redacted)
			}
			if tc.keep != "" && !strings.Contains(got, tc.keep) {
				t.Errorf("Redact(%q) = %q: lost %q", tc.in, got, tc.keep)
			}
		})
	}
}

func TestRedactKeepsOrdinaryText(t *testing.T) {
	for _, s := range []string{
		"Use PostgreSQL, not MongoDB. Never touch the public API.",
		"see internal/extract/prepare_test.go and TestAC09_LargeToolOutputsNotSentToExtractor",
		"max_tokens=2000 and the token budget is 12000",
		"https://github.com/openai/codex/blob/main/codex-rs/prompts/templates/compact/prompt.md",
		"func (p *Pool) Enqueue(job Job) error",
		"ExtractorRunsBehindBoundedWorkerPoolWithManyALegs",
		"commit abc1234 fixed it",
	} {
		if got := Redact(s); got != s {
			t.Errorf("Redact(%q) = %q, want unchanged", s, got)
		}
	}
}

// redactEveryRule is Redact without its pre-checks: every rule's pattern
// runs on every text. Redact must agree with it on any input.
func redactEveryRule(s string) string {
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

// redactSeeds are texts near each rule's edge, including the case folds
// Go's (?i) patterns make (U+212A KELVIN SIGN is a k, U+017F LONG S an s).
var redactSeeds = []string{
	"", "plain words and nothing else", "Bearer abcdefghijklmnopq", "BEARER abcdefghijklmnopq", "toKen abcdefghijklmnopq",
	"Baſic abcdefghijklmnopq", "paſſword: hunter2hunter2", "api_Key=abcd1234", "API‐KEY = zzzz", "client_ſecret: 12345678",
	"credential=abcd", "sessionKey: abcdef", "pwd=abcd", "https://u:p@h", "HTTPS://user:pass@host/x", "ſk-ant-abcdefghij",
	"sk-ant-abcdefghijk", "AKIAIOSFODNN7EXAMPLE", "ghp_abcdefghijabcdefghij12", "eyJabcd.eyJabcd.abcd", "xoxb-1234567890",
	"-----BEGIN PRIVATE KEY-----abc", strings.Repeat("a1B", 11), strings.Repeat("ab", 16) + "==", "sk_test_abcdefghijkl",
	"token\tabcdefghijkl", "key: value, token=\"abcd\"", "[REDACTED] token: [REDACTED]",
}

func TestRedactAgreesWithEveryRule(t *testing.T) {
	for _, s := range redactSeeds {
		if got, want := Redact(s), redactEveryRule(s); got != want {
			t.Errorf("Redact(%q) = %q, every rule gives %q", s, got, want)
		}
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range redactSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Redact(s), redactEveryRule(s); got != want {
			t.Errorf("Redact(%q) = %q, every rule gives %q", s, got, want)
		}
	})
}
