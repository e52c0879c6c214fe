package sanitize

// Escape-sequence states (ECMA-48, as terminals parse it). The cleaner is in
// escNone outside sequences; the others persist across pieces of input.
const (
	escNone      uint8 = iota
	escStart           // after ESC
	escInter           // after ESC and intermediates (0x20-0x2F)
	escCSI             // in a control sequence: parameters and intermediates
	escString          // in an OSC, DCS, SOS, PM or APC string
	escStringESC       // in a string, after ESC: ST if '\' follows
	escStringC2        // in a string, after 0xC2: ST (U+009C) if 0x9C follows
)

// escape consumes the escape sequence that the state c.esc is in, from
// s[i:], and returns the offset of the first byte after it. The byte that
// ends an aborted sequence is not consumed: it is processed as text. If s
// ends inside the sequence, c.esc keeps the state for the next piece; at the
// end of the input, the unterminated sequence is thus removed entirely.
func (c *cleaner[T]) escape(s T, i int) int {
	for i < len(s) {
		b := s[i]
		switch c.esc {
		case escStart:
			switch {
			case b == '[':
				c.esc = escCSI
			case b == ']' || b == 'P' || b == 'X' || b == '^' || b == '_':
				c.esc = escString // OSC, DCS, SOS, PM, APC
			case 0x20 <= b && b <= 0x2F:
				c.esc = escInter
			case 0x30 <= b && b <= 0x7E:
				c.esc = escNone // ESC and a final byte, e.g. ESC 7, ESC c
				return i + 1
			default:
				c.esc = escNone // a lone ESC: removed alone
				return i
			}
			i++
		case escInter:
			switch {
			case 0x20 <= b && b <= 0x2F:
				i++
			case 0x30 <= b && b <= 0x7E:
				c.esc = escNone // e.g. ESC ( B
				return i + 1
			default:
				c.esc = escNone
				return i
			}
		case escCSI:
			for i < len(s) && s[i]-0x20 < 0x20 { // parameters, intermediates
				i++
			}
			if i == len(s) {
				return i
			}
			c.esc = escNone
			if b := s[i]; 0x40 <= b && b <= 0x7E { // the final byte
				return i + 1
			}
			return i
		case escString:
			for i < len(s) {
				b := s[i]
				i++
				switch b {
				case 0x07, 0x18, 0x1A: // BEL, CAN, SUB
					c.esc = escNone
					return i
				case 0x1B:
					c.esc = escStringESC
				case 0xC2:
					// 0xC2 never continues a character, so 0xC2 0x9C is
					// always U+009C ST; a 0x9C byte inside another
					// character (✳ is E2 9C B3) is not.
					c.esc = escStringC2
				default:
					continue
				}
				break
			}
		case escStringESC:
			if b == '\\' {
				c.esc = escNone
				return i + 1
			}
			// Any other ESC ends the string and starts a new sequence,
			// as in the DEC parser terminals follow.
			c.esc = escStart
		case escStringC2:
			if b == 0x9C {
				c.esc = escNone
				return i + 1
			}
			c.esc = escString // b is part of the string: look at it again
		}
	}
	return i
}
