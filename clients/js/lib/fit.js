// Fitting a report into one frame the service can answer (see json.js):
// under 64 KiB, valid UTF-8, at most 64 levels deep. The bridge cuts
// nothing else: the service sanitizes, cuts to 1000 and judges every field.

import { MAX_DEPTH, MAX_FRAME, depth, stringify } from "./json.js";

export { MAX_FRAME };

// The envelope around params with the longest id this client can send.
const ENVELOPE = JSON.stringify({ jsonrpc: "2.0", id: Number.MAX_SAFE_INTEGER, method: "diagnostic.report", params: 0 }).length - 1;

/** The bytes params may take so that the frame stays under MAX_FRAME. */
export const PARAMS_BUDGET = MAX_FRAME - 1 - ENVELOPE;

/** The envelope is one level: params may nest one less than a frame. */
export const PARAMS_DEPTH = MAX_DEPTH - 1;

// A source cut to make room keeps at most this many encoded bytes: the
// service keeps 80 characters of it anyway.
const SOURCE_ROOM = 4096;

/**
 * reportParams returns the JSON text to send as diagnostic.report's params
 * for a payload an extension emitted: the payload itself when it fits;
 * else the same object with `message` (and, if that is not enough,
 * `source`) cut at a code point; else "null", which the service counts as
 * invalid. A payload JSON cannot encode (a cycle, a BigInt, a throwing
 * getter) or nested deeper than the service reads is also "null"; one that
 * encodes to nothing (undefined, a function) gives undefined: no params.
 * Lone surrogates become U+FFFD (UTF-8 cannot carry them). It never throws.
 * @param {unknown} payload
 * @returns {string | undefined}
 */
export function reportParams(payload) {
  let text;
  try {
    text = stringify(payload);
    if (text === undefined) return undefined;
    if (Buffer.byteLength(text) > PARAMS_BUDGET) text = cutToFit(payload);
  } catch {
    return "null";
  }
  if (text === undefined || depth(text) > PARAMS_DEPTH) return "null";
  return text;
}

/** cutToFit returns the cut payload's text, or undefined if it cannot fit. */
function cutToFit(payload) {
  if (payload === null || typeof payload !== "object" || Array.isArray(payload)) return undefined;
  /** @type {Record<string, unknown>} */
  const p = { ...payload };
  if (typeof p.source === "string" && jsonBytes(p.source) > SOURCE_ROOM) p.source = cutJSON(p.source, SOURCE_ROOM);
  if (typeof p.message === "string") {
    const rest = Buffer.byteLength(stringify({ ...p, message: "" }) ?? "");
    if (rest <= PARAMS_BUDGET) p.message = cutJSON(p.message, PARAMS_BUDGET - rest);
  }
  const text = stringify(p);
  return text !== undefined && Buffer.byteLength(text) <= PARAMS_BUDGET ? text : undefined;
}

/**
 * jsonBytes is the UTF-8 length of stringify(s) without its quotes.
 * @param {string} s
 */
export function jsonBytes(s) {
  return Buffer.byteLength(stringify(s) ?? "") - 2;
}

/**
 * cutJSON returns the longest prefix of s, ending at a code point
 * boundary, whose encoding by stringify (quotes excluded) takes at most max
 * bytes. The work is bounded by max, not by the length of s.
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
    } else cost = 3; // the rest of the BMP; a lone surrogate becomes U+FFFD
    if (used + cost > max) break;
    used += cost;
    i += width;
  }
  return s.slice(0, i);
}
