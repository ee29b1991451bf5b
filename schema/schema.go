// Package schema publishes Tether's JSON Schema documents: the continuity
// capsule (capsule.v1.json) and the continuity extractor's output
// (ops.v2.json; ops.v1.json is kept for reference). The files are embedded so every binary hands an
// extractor model the exact schema of the answer it accepts. They are the contract: internal/capsule
// enforces them in Go, and its tests check that it accepts exactly the documents a JSON Schema
// validator accepts against these files.
package schema

import "embed"

//go:embed *.json
var files embed.FS

// CapsuleID and OpsID are the $id of each schema document.
const (
	CapsuleID = "https://tether.dev/schema/capsule.v1.json"
	OpsID     = "https://tether.dev/schema/ops.v2.json"
)

// Capsule returns a copy of the capsule v1 JSON Schema.
func Capsule() []byte { return read("capsule.v1.json") }

// Ops returns a copy of the extractor output (ops v2) JSON Schema.
func Ops() []byte { return read("ops.v2.json") }

func read(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		// The files are embedded at build time; a missing one is a build defect.
		panic("schema: embedded file missing: " + name)
	}
	return b
}
