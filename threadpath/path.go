// Package threadpath is the rule of thread paths: what a path is, its
// lexical parent, the parent session's own path, and whose mailbox a
// thread's reports go to. It is a leaf, so that a viewer of the service
// (internal/watch) and the cluster's messages check paths by the one rule
// without linking the relay.
package threadpath

import (
	"errors"
	"fmt"
	"strings"
)

// Thread path limits: a leading "/", segments of [A-Za-z0-9][A-Za-z0-9_-]{0,63},
// at most maxSegments of them.
const (
	maxSegments   = 32
	maxSegmentLen = 64
)

// ErrInvalid is wrapped by every thread path error, so callers can tell a
// bad path from other failures with errors.Is.
var ErrInvalid = errors.New("invalid thread path")

// Validate reports whether p is a thread path: a leading "/", then 1 to
// 32 segments separated by "/", each matching ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$.
// The error names the rule that was broken.
func Validate(p string) error {
	if p == "" {
		return fmt.Errorf("%w: empty", ErrInvalid)
	}
	if p[0] != '/' {
		return fmt.Errorf("%w %q: must start with /", ErrInvalid, Clip(p))
	}
	if n := strings.Count(p, "/"); n > maxSegments {
		return fmt.Errorf("%w %q: %d segments, at most %d", ErrInvalid, Clip(p), n, maxSegments)
	}
	for i, s := range strings.Split(p[1:], "/") {
		if err := validateSegment(s); err != nil {
			return fmt.Errorf("%w %q: segment %d: %s", ErrInvalid, Clip(p), i+1, err)
		}
	}
	return nil
}

func validateSegment(s string) error {
	switch {
	case s == "":
		return errors.New("empty (no // and no trailing /)")
	case len(s) > maxSegmentLen:
		return fmt.Errorf("%d characters, at most %d", len(s), maxSegmentLen)
	case !isAlnum(s[0]):
		return errors.New("must start with a letter or digit [A-Za-z0-9]")
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '-' {
			return fmt.Errorf("character %q at %d: only [A-Za-z0-9_-] allowed", rune(c), i+1)
		}
	}
	return nil
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// Clip keeps error messages short when a path is huge or hostile; %q
// escapes whatever is left.
func Clip(p string) string {
	if len(p) > 80 {
		return p[:80] + "..."
	}
	return p
}

// LexicalParent returns the path one level up: "/root/x" → "/root". A
// path of one segment ("/root", "/k") has none and gives "". p should be
// valid (Validate); for any other string the answer is what is before
// its last "/", or "" when that is nothing.
func LexicalParent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return ""
	}
	return p[:i]
}

// Root is the parent session's own thread.
const Root = "/root"

// Recipient is the thread whose mailbox gets a thread's reports: its
// parent, or for an independent root (no parent) its owner.
func Recipient(parent, owner string) string {
	if parent != "" {
		return parent
	}
	return owner
}
