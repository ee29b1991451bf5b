//go:build race

package sessions

// raceEnabled: the race detector slows every goroutine several times; the
// bounded load test then does less per session (still 200 sessions).
const raceEnabled = true
