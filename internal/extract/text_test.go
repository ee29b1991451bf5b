package extract

import "testing"

// What the gate and the extractor read of a user's message: harness blocks
// removed whatever their case, everything else kept byte for byte.
func TestCleanTextRemovesHarnessBlocks(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"none", "use PostgreSQL, not MongoDB", "use PostgreSQL, not MongoDB"},
		{"a block", "<system-reminder>follow the rules</system-reminder>\nuse Go", "use Go"},
		{"any case", "<SYSTEM-Reminder note=\"x\">a</System-REMINDER>use Go", "use Go"},
		{"upper-case tag in the rules", "<instructions>AGENTS.md</INSTRUCTIONS> keep it small", "keep it small"},
		{"several", "a<command-name>/x</command-name>b<command-args>y</command-args>c", "abc"},
		{"unterminated runs to the end", "use Go <system-reminder>and the rest", "use Go"},
		{"a longer name is another tag", "<command-names>kept</command-names>", "<command-names>kept</command-names>"},
		{"self-closing", "keep <turn_aborted/> this", "keep"},
		// Characters whose lower case is longer in bytes (İ is 2 bytes,
		// "i̇" 3): offsets are t's own, so nothing is shifted or cut.
		{"before a block", "İstanbul <system-reminder>x</system-reminder>ships Friday", "İstanbul ships Friday"},
		{"inside and after", "ÀİK <local-command-stdout>İİİ</local-command-stdout> İ ok", "ÀİK  İ ok"},
		{"a lone angle bracket", "a < b and c<d", "a < b and c<d"},
		// ſ (long s) folds to s in Unicode, not in ASCII: not a tag.
		{"Unicode folding", "<ſystem-reminder>kept</ſystem-reminder>", "<ſystem-reminder>kept</ſystem-reminder>"},
	} {
		if got := cleanText(c.in); got != c.want {
			t.Errorf("%s: cleanText(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}
