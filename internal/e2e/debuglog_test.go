package e2e

import (
	"encoding/json"
	"strings"
	"testing"
)

// logRecords parses the JSON log lines.
func logRecords(t *testing.T, logs string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", l)
		}
		out = append(out, m)
	}
	return out
}

// log_level: debug adds, per request, the classification verdict (rule id
// and version, agent), the lineage decision, what preservation did to the
// body and how long it took, the upstream's status and time to first byte,
// and each extraction offered — ids, counts and timings only; log_level:
// info has none of them. Neither level logs any request content.
func TestDebugLogLevel(t *testing.T) {
	const secret = "Zanzibar-7731"
	debugMsgs := []string{"request classified", "lineage resolved", "request prepared", "upstream answered", "extraction offered"}
	for _, level := range []string{"debug", "info"} {
		t.Run(level, func(t *testing.T) {
			e := newEnv(t, envOptions{yaml: continuityYAML + "log_level: " + level + "\n"})
			a := e.agent("debuglog-session")
			say(t, a, "We're building an inventory service. Decision: use "+secret+" for storage, because we need transactions.",
				"Please make a plan and track it with your todo list.", "Yes, go ahead with that plan.")
			e.waitCapsule(t, secret)
			compact(t, a)
			say(t, a, "Continue.")

			logs := e.logs.String()
			if strings.Contains(logs, secret) || strings.Contains(logs, "inventory") {
				t.Fatalf("request content in the %s log:\n%s", level, logs)
			}
			seen := map[string][]map[string]any{}
			for _, r := range logRecords(t, logs) {
				msg, _ := r["msg"].(string)
				seen[msg] = append(seen[msg], r)
			}
			for _, m := range debugMsgs {
				if got := len(seen[m]) > 0; got != (level == "debug") {
					t.Errorf("log_level %s: %q logged = %v", level, m, got)
				}
			}
			if level != "debug" {
				return
			}
			var rule, epoch bool
			for _, r := range seen["request classified"] {
				if r["compaction"] == true && r["rule"] != "" && r["rule_version"].(float64) > 0 && r["agent"] == "claude-code" && r["id"] != "" {
					rule = true
				}
			}
			for _, r := range seen["lineage resolved"] {
				if r["event"] == "epoch" && r["a_leg"] != "" && r["client_hint"] == true {
					epoch = true
				}
			}
			if !rule {
				t.Errorf("no debug line names the compaction's rule: %v", seen["request classified"])
			}
			if !epoch {
				t.Errorf("no debug line gives the lineage decision of the turn after the compaction: %v", seen["lineage resolved"])
			}
			for _, r := range seen["upstream answered"] {
				if _, ok := r["ttfb_us"].(float64); !ok || r["status"].(float64) != 200 {
					t.Errorf("upstream debug line without status or timing: %v", r)
				}
			}
		})
	}
}
