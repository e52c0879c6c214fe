// The process-wide state of diagrelay in a pi process, and the small facts
// about pi the extensions share: is this a hosted child, where a session's
// data lives, when every session_shutdown handler has run. Internal to the
// package (diagrelay/pi exports none of it); docs/pi.md says why each is so.
//
// pi loads every extension with its own copy of its modules (jiti, no
// module cache), so nothing here keeps state in a module variable: the
// state of the process lives in one registry on globalThis.

import fs from "node:fs";

// Version 2: the delivery state is per mailbox (boxes), not one set.
const KEY = Symbol.for("diagrelay.pi.registry/2");

/**
 * What one mailbox's delivery remembers: the ids given to the agent and not
 * yet acknowledged, and the drain running now.
 * @typedef {{delivered: Set<number>, draining: Promise<void> | null, again: boolean}} BoxState
 */

/**
 * The session that owns the root Host of the process.
 * @typedef {{claim: object, pi: any, ui: any, data: string, temporary: boolean, ending?: boolean}} ParentClaim
 */

/**
 * A hosted child's own connection (the child extension's bridge).
 * @typedef {{bridge: import("./bridge.js").Bridge, pi: any, path: string, poll: ReturnType<typeof setInterval> | null, box: BoxState}} HostedChild
 */

/**
 * The process-wide state.
 * @typedef {{
 *   parent: ParentClaim | null,
 *   host: Promise<import("./host.js").Host> | null,
 *   child: HostedChild | null,
 *   boxes: Map<string, BoxState>,
 *   inproc: number,
 * }} Registry
 */

/** @returns {Registry} */
export function registry() {
  const g = /** @type {any} */ (globalThis);
  g[KEY] ??= { parent: null, host: null, child: null, boxes: new Map(), inproc: 0 };
  return g[KEY];
}

/** newBox is the delivery state of a mailbox nobody has read in this process. */
export function newBox() {
  return /** @type {BoxState} */ ({ delivered: new Set(), draining: null, again: false });
}

/**
 * boxFor is the delivery state of the mailbox known by key (its data
 * directory and its file's identity: see mailboxKey).
 * @param {string} key
 */
export function boxFor(key) {
  const boxes = registry().boxes;
  let box = boxes.get(key);
  if (!box) {
    box = newBox();
    boxes.set(key, box);
  }
  return box;
}

/**
 * mailboxKey names one incarnation of the mailbox in data: the directory and
 * the identity of its mailbox.db (device, inode, birth time). A mailbox made
 * anew where another was (a new temporary directory, a replaced file) gets a
 * new key, so its ids, which start at 1 again, never meet an old mailbox's.
 * @param {string} data
 */
export function mailboxKey(data) {
  try {
    const st = fs.statSync(`${data}/mailbox.db`, { bigint: true });
    return `${data}\0${st.dev}:${st.ino}:${st.birthtimeNs}`;
  } catch {
    return `${data}\0?`;
  }
}

/** Whether this process is a hosted child (its environment has a token). */
export function hostedChild(env = process.env) {
  return Boolean(env.DIAGRELAY_TOKEN);
}

/**
 * sessionDataDir is the diagrelay data directory of a pi session: beside
 * the session file (`<session>.jsonl` → `<session>.diagrelay/`), so that a
 * resumed session finds its own unacknowledged messages; for a session
 * without a file (--no-session) a fresh directory under the temporary
 * directory, removed when the session ends. DIAGRELAY_PI_DATA overrides both.
 * @param {string | undefined} sessionFile
 * @returns {{data: string, temporary: boolean}} data "" for a temporary directory not made yet
 */
export function sessionDataDir(sessionFile, env = process.env) {
  if (env.DIAGRELAY_PI_DATA) return { data: env.DIAGRELAY_PI_DATA, temporary: false };
  if (sessionFile) return { data: sessionFile.replace(/\.jsonl$/, "") + ".diagrelay", temporary: false };
  return { data: "", temporary: true }; // made when the Host starts
}

/**
 * afterShutdown runs fn once, after every extension's session_shutdown
 * handlers have run. pi awaits those handlers one by one in load order, so
 * an extension cannot act after the others from inside its own handler;
 * once they are all done pi invalidates the session's extension API (a
 * call on a captured `pi` then throws, as pi's extensions documentation
 * says), and print mode lets the event loop empty ("beforeExit").
 * Whichever comes first runs fn; after options.bound ms (default: none) fn
 * runs anyway. Call it from a session_shutdown handler. Its timers never
 * hold the event loop, and fn's failure goes nowhere.
 * @param {any} pi
 * @param {() => unknown} fn
 * @param {{bound?: number}} [options]
 */
export function afterShutdown(pi, fn, { bound } = {}) {
  let done = false;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let limit;
  const run = () => {
    if (done) return;
    done = true;
    clearInterval(timer);
    if (limit) clearTimeout(limit);
    process.off("beforeExit", run);
    try {
      Promise.resolve(fn()).catch(() => {});
    } catch {
      // a closing bridge never throws out of pi's shutdown
    }
  };
  const timer = setInterval(() => {
    if (isStale(pi)) run();
  }, 5);
  timer.unref();
  if (bound !== undefined) {
    limit = setTimeout(run, bound);
    limit.unref();
  }
  process.on("beforeExit", run);
}

/**
 * isStale tells whether pi is an extension API pi has invalidated (its session ended).
 * @param {any} pi
 */
export function isStale(pi) {
  if (typeof pi?.getFlag !== "function") return false;
  try {
    pi.getFlag("diagrelay-stale-check");
    return false;
  } catch {
    return true;
  }
}

/**
 * notifyParent shows text in the UI of the session that owns the root
 * Host, if it has one; a stale or missing UI is ignored.
 * @param {string} text
 * @param {"info" | "warning" | "error"} type
 */
export function notifyParent(text, type) {
  try {
    registry().parent?.ui?.notify(text, type);
  } catch {
    // a stale ui: nothing to show it in
  }
}
