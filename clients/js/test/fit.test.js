// Fitting a report into one frame: the encoded frame always stays under
// 64 KiB, the cut is a prefix that ends at a code point, and it is the
// longest such prefix; a payload that fits is sent untouched.

import assert from "node:assert/strict";
import { test } from "node:test";
import { cutJSON, jsonBytes, reportParams, MAX_FRAME, PARAMS_BUDGET } from "../lib/fit.js";
import { encode } from "../lib/rpc.js";

// Code units that encode to 1, 2, 3, 4 (pair), 6 (control, lone surrogate) bytes.
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

test("reportParams: every frame fits, payloads that fit are untouched", () => {
  const next = rng(2);
  for (let round = 0; round < 40; round++) {
    const n = Math.floor(next() * 60_000);
    const payload = { level: "info", message: randomText(next, n), source: next() < 0.3 ? randomText(next, n / 4) : "s" };
    const params = reportParams(payload);
    const frame = encode(Number.MAX_SAFE_INTEGER, "diagnostic.report", params);
    assert.ok(Buffer.byteLength(frame) - 1 < MAX_FRAME, `frame of ${Buffer.byteLength(frame)} bytes`);
    if (Buffer.byteLength(JSON.stringify(payload)) <= PARAMS_BUDGET) assert.equal(params, payload);
    else {
      assert.notEqual(params, payload, "the emitted payload is never modified");
      assert.ok(payload.message.startsWith(params.message));
      assert.equal(params.level, "info");
    }
  }
});

test("reportParams: shapes JSON cannot carry become null or no params", () => {
  const cyclic = {};
  cyclic.me = cyclic;
  assert.equal(reportParams(cyclic), null);
  assert.equal(reportParams(10n), null);
  assert.equal(reportParams(undefined), undefined);
  assert.equal(reportParams(() => 1), undefined);
  assert.equal(reportParams(42), 42);
  assert.equal(reportParams("x"), "x");
  // Too big and nothing to cut: null, which the service counts invalid.
  assert.equal(reportParams({ level: "x".repeat(70_000), message: "m" }), null);
  assert.equal(reportParams(["y".repeat(70_000)]), null);
  // Extra keys survive a cut: the service, not the bridge, ignores them.
  const p = reportParams({ level: "info", message: "z".repeat(70_000), path: "/root" });
  assert.equal(p.path, "/root");
});
