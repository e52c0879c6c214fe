// Encoding frames the service can always read. The service refuses, without
// knowing the request's id, a frame that is over 64 KiB, not UTF-8, or
// nested deeper than 64 (docs/protocol.md); such a call would never be
// answered, so this client never sends one.

/** The service's frame limit in bytes, newline excluded. */
export const MAX_FRAME = 64 << 10;

/** The deepest nesting of objects and arrays in a frame the service reads. */
export const MAX_DEPTH = 64;

// JSON.stringify writes a lone surrogate as a \udXXX escape (well-formed
// pairs are written as the character itself), which UTF-8 cannot carry and
// a strict reader refuses. This finds candidates; a false match (an escaped
// backslash before "ud800") only costs the slow path.
const LONE_SURROGATE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

function wellFormed(key, value) {
  if (typeof value === "string") return value.toWellFormed();
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const keys = Object.keys(value);
    if (keys.some((k) => !k.isWellFormed())) return Object.fromEntries(keys.map((k) => [k.toWellFormed(), value[k]]));
  }
  return value;
}

/**
 * stringify is JSON.stringify whose output is always valid UTF-8 once
 * encoded: a lone surrogate, in a value or a key, becomes U+FFFD, as the
 * service's own decoding of invalid text would make it. It throws what
 * JSON.stringify throws (a cycle, a BigInt).
 * @param {unknown} v
 * @returns {string | undefined}
 */
export function stringify(v) {
  const text = JSON.stringify(v);
  if (text === undefined || !LONE_SURROGATE.test(text)) return text;
  return JSON.stringify(v, wellFormed);
}

/**
 * depth is the deepest nesting of objects and arrays in a JSON text.
 * @param {string} text
 */
export function depth(text) {
  let d = 0, max = 0, inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++d > max) max = d;
    } else if (c === 0x7d || c === 0x5d) d--;
  }
  return max;
}
