package sanitize

// DisplayFloor is the newest Unicode version whose characters Clean keeps:
// 14.0, what glibc 2.35-2.37 and the terminals built on it draw. A code
// point assigned after it (DerivedAge) is one a terminal of that
// generation gives width -1 and paints as nothing, so each maximal run of
// them becomes one U+FFFD.
//
// Raising the floor is this one line and go generate: internal/ucdgen
// reads the constant, and TestFloorTables checks the generated tables
// were made for it.
const DisplayFloor = "14.0"
