// Fitting a report into one frame. The service reads frames of at most
// 64 KiB and refuses a longer one without knowing its id, so a call would
// never be answered: the bridge must never send one. It cuts nothing else:
// the service sanitizes, cuts to 1000 and judges every field itself.

/** The service's frame limit in bytes, newline excluded (docs/protocol.md). */
export const MAX_FRAME = 64 << 10;

// The envelope around params with the longest id this client can send.
const ENVELOPE = JSON.stringify({ jsonrpc: "2.0", id: Number.MAX_SAFE_INTEGER, method: "diagnostic.report", params: 0 }).length - 1;

/** The bytes params may take so that the frame stays under MAX_FRAME. */
export const PARAMS_BUDGET = MAX_FRAME - 1 - ENVELOPE;

// A source cut to make room keeps at most this many encoded bytes: the
// service keeps 80 characters of it anyway.
const SOURCE_ROOM = 4096;

/**
 * reportParams returns what to send as diagnostic.report's params for a
 * payload an extension emitted: the payload itself when its frame fits;
 * else the same object with `message` (and, if that is not enough, `source`)
 * cut at a code point; else null (which the service counts as invalid).
 * A payload JSON cannot encode (a cycle, a BigInt) is also sent as null;
 * one that encodes to nothing (undefined, a function) is sent without params.
 * It never throws.
 * @param {unknown} payload
 * @returns {unknown}
 */
export function reportParams(payload) {
  let text;
  try {
    text = JSON.stringify(payload);
  } catch {
    return null;
  }
  if (text === undefined) return undefined;
  if (Buffer.byteLength(text) <= PARAMS_BUDGET) return payload;
  if (payload === null || typeof payload !== "object" || Array.isArray(payload)) return null;
  try {
    /** @type {Record<string, unknown>} */
    const p = { ...payload };
    if (typeof p.source === "string" && jsonBytes(p.source) > SOURCE_ROOM) p.source = cutJSON(p.source, SOURCE_ROOM);
    if (typeof p.message === "string") {
      const rest = Buffer.byteLength(JSON.stringify({ ...p, message: "" }));
      if (rest <= PARAMS_BUDGET) p.message = cutJSON(p.message, PARAMS_BUDGET - rest);
    }
    if (Buffer.byteLength(JSON.stringify(p)) <= PARAMS_BUDGET) return p;
  } catch {
    // A getter, proxy or toJSON that throws the second time: fall through.
  }
  return null;
}

/**
 * jsonBytes is the UTF-8 length of JSON.stringify(s) without its quotes.
 * @param {string} s
 */
export function jsonBytes(s) {
  return Buffer.byteLength(JSON.stringify(s)) - 2;
}

/**
 * cutJSON returns the longest prefix of s, ending at a code point
 * boundary, whose JSON encoding (quotes excluded) takes at most max bytes.
 * The work is bounded by max, not by the length of s.
 * @param {string} s
 * @param {number} max
 */
export function cutJSON(s, max) {
  let used = 0;
  let i = 0;
  while (i < s.length) {
    const c = s.charCodeAt(i);
    let cost, width = 1;
    if (c < 0x20) cost = c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6;
    else if (c === 0x22 || c === 0x5c) cost = 2;
    else if (c < 0x80) cost = 1;
    else if (c < 0x800) cost = 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      cost = 4; // a surrogate pair: one code point, four bytes
      width = 2;
    } else if (c >= 0xd800 && c <= 0xdfff) cost = 6; // lone surrogate: \udxxx
    else cost = 3;
    if (used + cost > max) break;
    used += cost;
    i += width;
  }
  return s.slice(0, i);
}
