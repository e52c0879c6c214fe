//go:build race

package sanitize

// raceEnabled: under the race detector sync.Pool drops some of what is
// put back, so allocation counts are not the package's own.
const raceEnabled = true
