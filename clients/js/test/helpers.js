// Shared by the tests: the real `diagrelay serve` binary, a host on a fresh
// data directory, a bus with pi's shape, and the original's report() helper.
// (node --test also loads this file as a test file; it defines no tests.)

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Host } from "../index.js";

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

let builtBin;

/**
 * diagrelayBin is DIAGRELAY_BIN, else a binary built from this repository
 * once per test process (`go build -o <tmp>/diagrelay ./cmd/diagrelay`).
 */
export function diagrelayBin() {
  if (process.env.DIAGRELAY_BIN) return process.env.DIAGRELAY_BIN;
  if (!builtBin) {
    const dir = fs.mkdtempSync("/tmp/drjs-bin-");
    builtBin = path.join(dir, "diagrelay");
    execFileSync("go", ["build", "-o", builtBin, "./cmd/diagrelay"], { cwd: repoRoot, stdio: "inherit" });
    process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  }
  return builtBin;
}

/**
 * shortDir is a fresh 0700 directory under /tmp: Unix socket paths must
 * stay under 108 bytes, and serve refuses a data directory others can read.
 */
export function shortDir(t) {
  const dir = fs.mkdtempSync("/tmp/drjs-");
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * startHost starts a real service for test t and stops it afterwards. Its
 * notifications are collected in host.notes.
 */
export async function startHost(t, options = {}) {
  const data = shortDir(t);
  const host = await Host.start({ data, socket: path.join(data, "s"), bin: diagrelayBin(), ...options });
  host.notes = [];
  host.on("notify", (n) => host.notes.push(n));
  t.after(() => host.stop());
  return host;
}

/** createBus is a bus with pi's shape: on(topic, fn) → unsubscribe, emit. */
export function createBus() {
  const handlers = new Map();
  return {
    on(topic, fn) {
      if (!handlers.has(topic)) handlers.set(topic, new Set());
      const set = handlers.get(topic);
      const entry = (data) => fn(data); // a fresh entry per subscription
      set.add(entry);
      return () => set.delete(entry);
    },
    emit(topic, data) {
      for (const fn of [...(handlers.get(topic) ?? [])]) fn(data);
    },
    count(topic) {
      return handlers.get(topic)?.size ?? 0;
    },
  };
}

/**
 * report is the original's helper as its documentation gives it, plus a
 * record of the fallback path (where it would use ctx.ui.notify / stderr).
 * It returns whether the probe found a live host.
 */
export function report(pi, level, message, source) {
  // This synchronous, child-local probe identifies a LIVE manager host, not a
  // historical transcript marker. No listener in a normal top-level session.
  let hosted = false;
  pi.events.emit("pi-subagent-manager:diagnostic:probe", {
    respond: (capability) => { hosted = capability?.protocol === 1 && typeof capability.version === "string"; },
  });
  if (hosted) {
    pi.events.emit("pi-subagent-manager:diagnostic", { level, message, source });
  } else {
    // Retain your normal top-level reporting (e.g. ctx.ui.notify / stderr).
    (pi.fallback ??= []).push({ level, message, source });
  }
  return hosted;
}

/** waitFor polls cond every 10 ms until it is truthy or ms pass. */
export async function waitFor(cond, ms = 3000, what = "condition") {
  const end = Date.now() + ms;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
