//go:build race

package crash

// raceEnabled: under the race detector a child serves its first calls
// several times slower, so it is given longer before each kill.
const raceEnabled = true
