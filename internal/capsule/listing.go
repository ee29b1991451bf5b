package capsule

import (
	"fmt"
	"strings"
)

// Format selects what [RenderWith] produces.
type Format int

// The renderings of a capsule.
const (
	// FormatBlock is the delimited block agents receive: [Render].
	FormatBlock Format = iota
	// FormatListing is the compact listing an extractor model reads: the
	// ids it may cite and the facts it must not re-add. It opens with
	// "revision N" ("revision N: (empty)" for an empty capsule), then the
	// plan with its raw step statuses, active decisions (a rationale cut
	// to 160 bytes), constraints, rejected alternatives, retired items
	// with their status and open questions, one per line under plain
	// headings. It has no tags, header or digest, and keeps the stored
	// order of items.
	FormatListing
)

// RenderOptions say how [RenderWith] renders a capsule.
type RenderOptions struct {
	Format Format
	// Line, if set, rewrites each line of a listing after newlines inside
	// an item became spaces (an extractor redacts secrets and defuses the
	// fences of its own input here). A block ignores it.
	Line func(string) string
}

// listingRationale bounds a rationale in a listing, in bytes.
const listingRationale = 160

// RenderWith renders c as o says.
func RenderWith(c *Capsule, o RenderOptions) string {
	if o.Format != FormatListing {
		return Render(c)
	}
	if c.Empty() {
		rev := int64(0)
		if c != nil {
			rev = c.Revision
		}
		return fmt.Sprintf("revision %d: (empty)", rev)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "revision %d", c.Revision)
	line := func(s string) {
		s = strings.ReplaceAll(s, "\n", " ")
		if o.Line != nil {
			s = o.Line(s)
		}
		b.WriteString("\n")
		b.WriteString(s)
	}
	if p := c.LatestPlan; p != nil {
		line(fmt.Sprintf("PLAN (%s):", p.Status))
		for i, s := range p.Steps {
			line(fmt.Sprintf("%d. [%s] %s", p.Condensed+i+1, s.Status, s.Text))
		}
	}
	var active, cons, rejected, retired, open []string
	for _, d := range c.Decisions {
		if d.Status == StatusActive {
			s := d.ID + ": " + d.Statement
			if d.Rationale != "" {
				s += " (why: " + cut(d.Rationale, listingRationale) + ")"
			}
			active = append(active, s)
		} else {
			retired = append(retired, d.ID+": "+d.Statement+" ("+d.Status+")")
		}
	}
	for _, k := range c.Constraints {
		if k.Status == StatusActive {
			cons = append(cons, k.ID+": "+k.Text)
		} else {
			retired = append(retired, k.ID+": "+k.Text+" ("+k.Status+")")
		}
	}
	for _, r := range c.Rejected {
		rejected = append(rejected, r.ID+": "+r.Text)
	}
	for _, q := range c.OpenQuestions {
		if q.Status == StatusOpen {
			open = append(open, q.ID+": "+q.Text)
		}
	}
	for _, s := range []struct {
		title string
		items []string
	}{
		{"ACTIVE DECISIONS:", active},
		{"CONSTRAINTS:", cons},
		{"REJECTED ALTERNATIVES:", rejected},
		{"RETIRED (superseded or rejected; reinstate only on explicit user request):", retired},
		{"OPEN QUESTIONS:", open},
	} {
		if len(s.items) == 0 {
			continue
		}
		line(s.title)
		for _, it := range s.items {
			line("- " + it)
		}
	}
	return b.String()
}

// cut shortens s to at most n bytes on a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + " […]"
}
