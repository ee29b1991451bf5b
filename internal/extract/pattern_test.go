package extract

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// extractorExprs returns the expression of every mustPattern call in the
// package's source, so a pattern added later is covered without a list to
// keep.
func extractorExprs(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		tb.Fatal(err)
	}
	var exprs []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			tb.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			id, ok := call.Fun.(*ast.Ident)
			switch {
			case ok && id.Name == "mustPattern" && len(call.Args) == 1:
				exprs = append(exprs, mustConst(tb, fset, call, call.Args[0]))
			case ok && id.Name == "mustSubjectPattern" && len(call.Args) == 3:
				// its verdict, a pattern of its own
				exprs = append(exprs, "^(?:"+mustConst(tb, fset, call, call.Args[2])+")")
			}
			return true
		})
	}
	if len(exprs) < 50 {
		tb.Fatalf("found only %d patterns in the package source", len(exprs))
	}
	return exprs
}

// mustConst returns the constant string arg of call, failing tb if it is
// not one.
func mustConst(tb testing.TB, fset *token.FileSet, call *ast.CallExpr, arg ast.Expr) string {
	tb.Helper()
	expr, ok := constString(arg)
	if !ok {
		tb.Fatalf("%s: %s with an argument that is not a constant string", fset.Position(call.Pos()), call.Fun)
	}
	return expr
}

// constString evaluates a string literal or a sum of them.
func constString(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		a, ok1 := constString(e.X)
		b, ok2 := constString(e.Y)
		return a + b, ok1 && ok2
	case *ast.ParenExpr:
		return constString(e.X)
	}
	return "", false
}

// prefilterSamples are the texts the extractor's patterns meet: each
// corpus turn as written and lower-cased, and each of its lines and
// sentences.
func prefilterSamples(tb testing.TB) []string {
	var out []string
	for _, t := range corpusTurns(tb) {
		for _, s := range []string{t, strings.ToLower(t)} {
			out = append(out, s)
			for _, l := range strings.Split(s, "\n") {
				out = append(out, l, strings.TrimSpace(l))
				out = append(out, sentences(l)...)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkSound fails when the pattern's answer for s differs from its
// regexp's, for every method the extractor calls, or when the prefilter
// rules s out though the regexp matches it.
func checkSound(t *testing.T, p *pattern, s string) {
	t.Helper()
	re := p.re
	if !p.filter().may(s) && re.MatchString(s) {
		t.Fatalf("the prefilter of %q rules out %q, which the regexp matches", re, s)
	}
	same := func(method string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s of %q on %q differs from the regexp's (-want +got):\n%s", method, re, s, cmp.Diff(want, got))
		}
	}
	same("MatchString", p.MatchString(s), re.MatchString(s))
	same("FindString", p.FindString(s), re.FindString(s))
	same("FindStringIndex", p.FindStringIndex(s), re.FindStringIndex(s))
	same("FindStringSubmatch", p.FindStringSubmatch(s), re.FindStringSubmatch(s))
	same("FindStringSubmatchIndex", p.FindStringSubmatchIndex(s), re.FindStringSubmatchIndex(s))
	for _, n := range []int{-1, 1} {
		same("FindAllStringIndex", p.FindAllStringIndex(s, n), re.FindAllStringIndex(s, n))
		same("Split", p.Split(s, n), re.Split(s, n))
	}
	same("ReplaceAllString", p.ReplaceAllString(s, "<$0>"), re.ReplaceAllString(s, "<$0>"))
	upper := func(m string) string { return strings.ToUpper(m) + "|" }
	same("ReplaceAllStringFunc", p.ReplaceAllStringFunc(s, upper), re.ReplaceAllStringFunc(s, upper))
}

// all returns the literals, sorted.
func (f *literals) all() []string {
	var out []string
	for _, g := range f.groups {
		out = append(out, g.lits...)
	}
	slices.Sort(out)
	return out
}

// The prefilters of the word-list patterns rule out most of the corpus
// sentences their regexp does not match; else they buy nothing.
func TestMarkerPrefilterRulesOut(t *testing.T) {
	samples := prefilterSamples(t)
	for _, p := range []*pattern{turnHold, hedge, reported, negatedDecision, questionLead, anymore, reasonish, oneOff, labelRe, decisive} {
		unmatched, ruledOut := 0, 0
		for _, s := range samples {
			if p.re.MatchString(s) {
				continue
			}
			unmatched++
			if !p.filter().may(s) {
				ruledOut++
			}
		}
		if ruledOut < unmatched*3/4 {
			t.Errorf("%.50s: the prefilter rules out %d of the %d samples the regexp does not match", p, ruledOut, unmatched)
		}
	}
}

// Over the corpus (the seeds) and any other string, every pattern of the
// extractor answers as its regexp does.
func FuzzMarkerPrefilter(f *testing.F) {
	for i, s := range prefilterSamples(f) {
		if raceEnabled && i%16 != 0 {
			continue // the whole corpus runs without the detector (.ci/run)
		}
		f.Add(s)
	}
	var patterns []*pattern
	alts := map[*pattern][]*regexp.Regexp{}
	for _, expr := range extractorExprs(f) {
		p := mustPattern(expr)
		patterns = append(patterns, p)
		if len(p.filter().alts) > 0 {
			alts[p] = alternativeRegexps(f, p.re)
		}
	}
	judged := regexp.MustCompile(judgement.expr)
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range patterns {
			checkSound(t, p, s)
			if a := alts[p]; a != nil {
				checkAlternatives(t, p.re, a, s)
			}
		}
		checkSubject(t, judgement, judged, s)
	})
}

// checkSubject fails when p's answer for s differs from re's, its
// regexp's.
func checkSubject(t *testing.T, p *subjectPattern, re *regexp.Regexp, s string) {
	t.Helper()
	if got, want := p.MatchString(s), re.MatchString(s); got != want {
		t.Fatalf("MatchString of %q on %q is %v, its regexp's %v", p, s, got, want)
	}
}

// A subject pattern answers as its regexp does on the corpus and on
// subjects at and past its bounds.
func TestSubjectPattern(t *testing.T) {
	samples := append(prefilterSamples(t),
		"postgres is overkill", "postgres  \t is overkill", " is overkill", "is overkill", "a is overkill",
		strings.Repeat("x", 39)+" is overkill", strings.Repeat("x", 40)+" is overkill", strings.Repeat("x", 41)+" is overkill",
		strings.Repeat("x ", 20)+" is overkill", strings.Repeat("x ", 21)+"is overkill", "é is overkill", "x\u00a0is overkill",
		"mysql\nis too slow", "x is\toverkill", "it is  too", "it's too slow", "postgres is", "postgres ")
	re := regexp.MustCompile(judgement.expr)
	matched := 0
	for _, s := range samples {
		checkSubject(t, judgement, re, s)
		if judgement.MatchString(s) {
			matched++
		}
	}
	if matched < 100 {
		t.Errorf("only %d samples match %q", matched, judgement)
	}
}

// FuzzPrefilter checks the derivation on any expression, not only the
// extractor's.
func FuzzPrefilter(f *testing.F) {
	exprs := extractorExprs(f)
	for i, s := range corpusTurns(f)[:100] {
		f.Add(exprs[i%len(exprs)], strings.ToLower(s))
	}
	for _, seed := range [][2]string{
		{`(?i)\bno\s+way\b`, "NO WAY"},
		{`(?i)ſ`, "S"},
		{`\x{FFFD}`, "\xff"},
		{`[\x{FFF0}-\x{FFFF}]x`, "\xffx"},
		{`^$`, ""},
		{`a*b?`, ""},
		{`(?:\bfoo|bar)\b`, "xbar"},
		{`(?m)^x`, "a\nx"},
		{`\Bab`, "cab"},
		{`\b's\b`, "it's"},
		{`é|e\x{301}`, "cafe\u0301"},
		{`,?\s+(?:period|full stop)[.!]*$`, "ok, period.!"},
		{`(?:etc\.|ok)[.]?$`, "etc."},
		{`^(?:a|b)\s+(?:x|y)$|^c[.!]?$`, "c!"},
		{`,(?:\s+as\s+|\s+it\s+)`, "as it, as x"},
		{`(?i)(?:k|s)[.]*$`, "\u212a."},
		{`^keeps?\s+(?:crashing|[a-z]+ing\s+us)`, "keep failing us"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, expr, s string) {
		re, err := regexp.Compile(expr)
		if err != nil {
			return
		}
		p := &pattern{re: re}
		checkSound(t, p, s)
		checkAlternatives(t, re, alternativeRegexps(t, re), s)
	})
}

// alternativeRegexps compiles the alternatives of re (alternatives).
func alternativeRegexps(tb testing.TB, re *regexp.Regexp) []*regexp.Regexp {
	tb.Helper()
	parsed, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		tb.Fatal(err)
	}
	var out []*regexp.Regexp
	for _, alt := range alternatives(parsed.Simplify()) {
		a, err := regexp.Compile(alt.String())
		if err != nil {
			tb.Fatalf("alternative %s of %s: %v", alt, re, err)
		}
		out = append(out, a)
	}
	return out
}

// checkAlternatives fails when re matches s and none of its alternatives
// does, or one does and re does not.
func checkAlternatives(t *testing.T, re *regexp.Regexp, alts []*regexp.Regexp, s string) {
	t.Helper()
	matched := slices.ContainsFunc(alts, func(a *regexp.Regexp) bool { return a.MatchString(s) })
	if want := re.MatchString(s); matched != want {
		t.Fatalf("%s on %q: its regexp matches %v, one of its alternatives %q %v", re, s, want, alts, matched)
	}
}

// An alternation's matches are its alternatives' (each given a prefilter
// of its own), on the corpus, for every pattern of the extractor split
// so.
func TestAlternatives(t *testing.T) {
	samples := prefilterSamples(t)
	split := 0
	for _, expr := range extractorExprs(t) {
		if len(mustPattern(expr).filter().alts) == 0 {
			continue
		}
		split++
		re := regexp.MustCompile(expr)
		alts := alternativeRegexps(t, re)
		for _, s := range samples {
			checkAlternatives(t, re, alts, s)
		}
	}
	if split < 20 {
		t.Errorf("only %d patterns have prefilters of their alternatives", split)
	}
}

// The derived prefilters of the shapes the extractor uses.
func TestPrefilterDerivation(t *testing.T) {
	ws := func(prefix ...string) []string { // each prefix followed by each \s
		var out []string
		for _, p := range prefix {
			for _, c := range "\t\n\f\r " {
				out = append(out, p+string(c))
			}
		}
		return out
	}
	tests := []struct {
		expr  string
		where place
		first []string
		inner []string // nil: none beyond first
	}{
		{`\b(?:maybe|perhaps|i think|let'?s see)\b`, atBoundary, []string{"i think", "let's see", "lets see", "maybe", "perhaps"}, nil},
		{`\btemporar\w*\b`, atBoundary, []string{"temporar"}, nil},
		{`^(?:we|i)(?:'ve| have)?\s+decided`, atStart, append(ws("i", "we"), "i've", "we've"), []string{"decided"}},
		{`^no\s+(?:to\s+)?(.+)$`, atStart, ws("no"), nil},
		{`\b(?:not|never)\s+(?:decided|agreed)\b`, atBoundary, append(ws("not"), "never"), []string{"agreed", "decided"}},
		{`^(.{1,40}?)\s+(?:instead of|rather than)\s+(.+)$`, atAnyOffset, []string{"instead of", "rather than"}, nil},
		{"(?s)```.*?(?:```|$)|~~~.*?(?:~~~|$)", atAnyOffset, []string{"```", "~~~"}, nil},
		{`(?i)\bno\s+way`, atBoundary, ws("NO", "No", "nO", "no"), []string{"WAY", "WAy", "WaY", "Way", "wAY", "wAy", "waY", "way"}},
		{`^(?:the idea of\s+)?(?:an?\s+|the\s+)?`, anyPlace, nil, nil}, // matches the empty string
		{`x*|.y`, anyPlace, nil, nil},
		// the first literals of keeps? are "keep"; "ing\s" is what else a match holds
		{`^keeps?\s+(?:crashing|[a-z]+ing\s+us)`, atStart, []string{"keep"}, append(ws("ing"), "crashing")},
	}
	for _, tc := range tests {
		f := newPrefilter(tc.expr)
		var inner []string
		if f.inner != nil {
			inner = f.inner.all()
		}
		if f.first.where != tc.where || !slices.Equal(f.first.all(), slices.Sorted(slices.Values(tc.first))) ||
			!slices.Equal(inner, slices.Sorted(slices.Values(tc.inner))) {
			t.Errorf("%s: prefilter %v %q and %q, want %v %q and %q", tc.expr, f.first.where, f.first.all(), inner, tc.where, tc.first, tc.inner)
		}
	}
}

// The ends of a text a pattern ends at, with what it may end with after
// them (`[.!]*$`) cut, and the prefilters of an alternation's
// alternatives.
func TestPrefilterEndsAndAlternatives(t *testing.T) {
	ws := func(s string) []string { return []string{"\t" + s, "\n" + s, "\f" + s, "\r" + s, " " + s} }
	for _, tc := range []struct {
		expr    string
		ends    []string
		trimmed string // the bytes cut before comparing
		alts    int
	}{
		{`,?\s+(?:period|full stop|etc\.)[.!]*$`, []string{"etc", "full stop", "period"}, "!.", 0},
		{`\s(?:x|y)\.?\s*$`, append(ws("x"), ws("y")...), "\t\n\f\r .", 0},
		{`(?:\.|!)*$`, nil, "", 0},
		{`(?i)ok[k.]*$`, []string{".", "K", "k", "\u212a", "OK", "Ok", "oK", "ok", "O\u212a", "o\u212a"}, "", 0}, // K is not cut: it folds to K
		{`^store\s+\w+|\w+`, nil, "", 0}, // \w+ alone rules nothing out
		{`^store\s+\w+|^\w+\s+(?:is|are)\s+kept\b`, nil, "", 2},
		{`,(?:\s+as\s+|\s+it\s+(?:is|was))`, nil, "", 2},
	} {
		f := newPrefilter(tc.expr)
		var trimmed []byte
		for b := range 256 {
			if f.trim.has(byte(b)) && f.ends != nil {
				trimmed = append(trimmed, byte(b))
			}
		}
		if !slices.Equal(f.ends, slices.Sorted(slices.Values(tc.ends))) || string(trimmed) != tc.trimmed || len(f.alts) != tc.alts {
			t.Errorf("%s: ends %q cut of %q, %d alternatives; want %q cut of %q, %d", tc.expr, f.ends, trimmed, len(f.alts), tc.ends, tc.trimmed, tc.alts)
		}
	}
}

func (p *pattern) String() string { return p.re.String() }

func (p *subjectPattern) String() string { return p.expr }

// may reports whether s can hold a match; false is a proof that none
// exists.
func (f *prefilter) may(s string) bool { return f.start(s) >= 0 }
