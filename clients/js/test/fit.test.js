// Frames the service can always answer by id: under 64 KiB, valid UTF-8,
// at most 64 levels deep. The cut is a prefix that ends at a code point and
// is the longest such prefix; a payload that fits is sent as it is.

import assert from "node:assert/strict";
import { test } from "node:test";
import { cutJSON, jsonBytes, reportParams, MAX_FRAME, PARAMS_BUDGET } from "../lib/fit.js";
import { depth, stringify, MAX_DEPTH } from "../lib/json.js";
import { encode } from "../lib/rpc.js";

// Code units that encode to 1, 2, 3, 4 (pair), 6 (control) bytes, and lone surrogates.
const PIECES = ["a", "\"", "\\", "\n", "\u0001", "\u007f", "é", "\u2028", "€", "😀", "\ud800", "\udc00", "\u0000"];

// A seeded generator, so that a failure can be replayed.
function rng(seed) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

function randomText(next, n) {
  let out = "";
  for (let i = 0; i < n; i++) out += PIECES[Math.floor(next() * PIECES.length)];
  return out;
}

// validFrame: what the strict service requires of every frame.
function assertValidFrame(frame) {
  assert.ok(frame.endsWith("\n"));
  const bytes = Buffer.from(frame.slice(0, -1), "utf8");
  assert.ok(bytes.length <= MAX_FRAME, `frame of ${bytes.length} bytes`);
  // Valid UTF-8 throughout: no lone surrogate escaped or raw.
  assert.ok(new TextDecoder("utf-8", { fatal: true }).decode(bytes).isWellFormed());
  assert.ok(!/\\u[dD][89a-fA-F][0-9a-fA-F]{2}/.test(frame.replace(/\\\\/g, "")), "a surrogate escape");
  assert.ok(depth(frame) <= MAX_DEPTH);
  JSON.parse(frame);
}

test("cutJSON: the longest code-point prefix within the budget", () => {
  const next = rng(1);
  for (let round = 0; round < 300; round++) {
    const s = randomText(next, Math.floor(next() * 200));
    const max = Math.floor(next() * 400);
    const cut = cutJSON(s, max);
    assert.ok(s.startsWith(cut));
    assert.ok(jsonBytes(cut) <= max, `${jsonBytes(cut)} > ${max}`);
    if (cut.length < s.length) {
      // Never half a surrogate pair.
      const last = cut.charCodeAt(cut.length - 1), first = s.charCodeAt(cut.length);
      assert.ok(!(last >= 0xd800 && last <= 0xdbff && (first & 0xfc00) === 0xdc00), "split a pair");
      // One more code point would not fit.
      const step = (first & 0xfc00) === 0xd800 && (s.charCodeAt(cut.length + 1) & 0xfc00) === 0xdc00 ? 2 : 1;
      assert.ok(jsonBytes(s.slice(0, cut.length + step)) > max);
    }
  }
});

test("reportParams: every frame is valid and fits; payloads that fit go as they are", () => {
  const next = rng(2);
  for (let round = 0; round < 40; round++) {
    const n = Math.floor(next() * 60_000);
    const payload = { level: "info", message: randomText(next, n), source: next() < 0.3 ? randomText(next, n / 4) : "s" };
    const before = JSON.stringify(payload);
    const params = reportParams(payload);
    assertValidFrame(encode(Number.MAX_SAFE_INTEGER, "diagnostic.report", params));
    assert.equal(JSON.stringify(payload), before, "the emitted payload is never modified");
    const sent = JSON.parse(params);
    const whole = stringify(payload);
    if (Buffer.byteLength(whole) <= PARAMS_BUDGET) assert.equal(params, whole);
    else {
      assert.ok(JSON.parse(whole).message.startsWith(sent.message));
      assert.equal(sent.level, "info");
    }
  }
});

test("lone surrogates become U+FFFD, in values and keys", () => {
  assert.equal(reportParams({ level: "info", message: "a\ud800b\udc00c😀" }), '{"level":"info","message":"a\ufffdb\ufffdc😀"}');
  assert.equal(reportParams({ level: "info", message: "m", ["k\udbff"]: "v" }), '{"level":"info","message":"m","k\ufffd":"v"}');
  // An escaped backslash before "ud800" is text, not a surrogate.
  assert.equal(reportParams({ level: "info", message: "\\ud800" }), '{"level":"info","message":"\\\\ud800"}');
});

test("reportParams: what no frame can carry becomes null or no params", () => {
  const cyclic = {};
  cyclic.me = cyclic;
  assert.equal(reportParams(cyclic), "null");
  assert.equal(reportParams(10n), "null");
  assert.equal(reportParams(undefined), undefined);
  assert.equal(reportParams(() => 1), undefined);
  assert.equal(reportParams(42), "42");
  assert.equal(reportParams("x"), '"x"');
  // Too big and nothing to cut: null, which the service counts invalid.
  assert.equal(reportParams({ level: "x".repeat(70_000), message: "m" }), "null");
  assert.equal(reportParams(["y".repeat(70_000)]), "null");
  // Extra keys survive a cut: the service, not the bridge, ignores them.
  assert.equal(JSON.parse(reportParams({ level: "info", message: "z".repeat(70_000), path: "/root" })).path, "/root");
  // Nesting: the envelope is one level, params may take the other 63.
  let deep = 0;
  for (let i = 0; i < 62; i++) deep = [deep];
  const ok = reportParams({ level: "info", message: "m", deep });
  assert.equal(depth(ok), 63);
  assertValidFrame(encode(1, "diagnostic.report", ok));
  assert.equal(reportParams({ level: "info", message: "m", deep: [deep] }), "null");
  // Brackets inside strings are not nesting.
  assert.notEqual(reportParams({ level: "info", message: "[".repeat(100) }), "null");
});
