// Package prompts embeds the versioned prompts Tether sends to auxiliary
// models. A prompt's version is part of its file name and is recorded with
// every call that uses it, so a change of wording is a new file, never an
// edit in place.
package prompts

import (
	_ "embed"
	"strings"
)

//go:embed extract.v2.md
var extractV2 string

// ExtractVersion names the continuity extractor prompt returned by Extract.
const ExtractVersion = "extract.v2"

// Extract returns the system prompt of the continuity extractor.
func Extract() string { return strings.TrimSpace(extractV2) }
