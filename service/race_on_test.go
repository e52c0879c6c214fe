//go:build race

package service

// raceEnabled: memory figures under the race detector are not the
// program's own.
const raceEnabled = true
