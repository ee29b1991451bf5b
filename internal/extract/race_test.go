//go:build race

package extract

// raceEnabled: under the race detector the reader runs about ten times
// slower, so the seed corpus of FuzzMarkerPrefilter (every statement
// against every pattern) is sampled there; .ci/run runs it whole without
// the detector.
const raceEnabled = true
