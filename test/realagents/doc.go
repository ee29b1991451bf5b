// Package realagents runs real coding-agent CLIs, installed from npm at
// pinned versions, through Tether against the scripted model, and checks
// what the model received after a compaction. Build tag: agents.
//
//	go test -tags agents -count=1 -timeout 20m ./test/realagents/
package realagents
