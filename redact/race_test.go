//go:build race

package redact

// Under the race detector the regexes run some 30 times slower: the corpus
// tests draw less (the full draw runs without -race in the same CI run).
const raceEnabled = true
