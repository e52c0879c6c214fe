// Package sanitize makes text from an untrusted extension safe to paint in a
// terminal and to put in a model's context (SPEC §5). Message and Source
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
// unassigned rest of U+E0000-U+E0FFF), noncharacters, and variation
// selectors other than U+FE0E and U+FE0F (U+180B-U+180F, U+FE00-U+FE0D,
// U+E0100-U+E01EF). Private-use and unassigned code points are kept. Emoji
// tag sequences lose their tags: 🏴 plus the tags for Scotland becomes 🏴.
//
// Joiners: U+200C, U+200D, U+FE0E and U+FE0F survive only directly after a
// visible character (anything kept that is not a space or one of these
// four; combining marks count, as "क्‍ष" needs) and never next to one
// another, with one exception: U+FE0F U+200D, which emoji ZWJ sequences
// such as 🏳️‍🌈 and ❤️‍🔥 need. Neighbors are judged after removal: in
// "a ZWJ ZWSP ZWNJ b" the two joiners are adjacent. A run of joiners that
// breaks the rule is removed whole, so a run cannot encode bits; what
// remains possible is one joiner after a visible character, which Persian
// (می‌خواهم) and Indic scripts need.
//
// Combining marks: a run of non-starters is capped at 30, the Stream-Safe
// Text Format limit of UAX #15, and the characters beyond are removed. The
// count is the one golang.org/x/text/unicode/norm makes: characters with a
// non-zero combining class or that combine backward (such as Hangul vowel
// and final jamo), in their compatibility decompositions (U+0344 counts
// two), across removed characters. With it, norm never has to insert
// U+034F, so every run of characters of non-zero combining class in the
// output is at most 30 long.
//
// Whitespace: TAB, LF, VT, FF, CR, U+0085 and every other character for
// which unicode.IsSpace is true (U+00A0, U+2028, U+3000, ...) becomes an
// ASCII space; runs of spaces (after removal) collapse to one; leading and
// trailing ones are dropped.
//
// Normalization: the text is NFC (golang.org/x/text/unicode/norm).
//
// Length: with a limit, the text is at most that many UTF-16 code units
// (JavaScript's length). A longer text is cut at a grapheme-cluster
// boundary (UAX #29) and ends with "…" (U+2026), inside the limit: Clean
// keeps the longest run of whole clusters that leaves one unit for the
// ellipsis, drops a space before it, and appends it. If not even the first
// cluster fits, as many of its code points as fit are kept: a limit of 1
// gives "…" alone.
//
// # Guarantees
//
// The result is valid UTF-8 with none of the removed characters, no
// whitespace but single inner spaces, NFC, within the limit, and obeys the
// joiner and mark rules. Clean is idempotent:
// Clean(Clean(s, n), n) == Clean(s, n). A cut result, less its ellipsis, is
// a prefix of Clean(s, 0). Text in any script, emoji ZWJ sequences, flags,
// keycaps and skin tones pass unchanged when nothing else is wrong.
//
// # Cost
//
// Already-clean text within the limit is returned as it is, without
// allocating, and so is a clean substring of the input (trimmed spaces);
// otherwise Clean usually allocates once, for the result. Printable ASCII
// and text that no rule changes are copied in bulk, eight bytes at a time
// for ASCII. With a limit, Clean stops reading once the result is certain
// to be cut, so its work is bounded by the limit, plus whatever it removes
// or collapses on the way (input that is all removed characters is read to
// the end). The property tables cover Unicode in 256-character blocks,
// built on first use from the unicode and norm packages linked in (Unicode
// 15.0 with Go 1.26; graphemes follow github.com/clipperhouse/uax29/v2).
package sanitize
