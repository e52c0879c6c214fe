// diagrelay/pi: the one Host of a pi process, for the parent extension
// (pi/parent.js) and for subagent extensions (hostFor), and the pieces the
// child extension (pi/child.js) shares with them. SPEC §11.3; docs/pi.md.
//
// pi loads every extension with its own copy of its modules (jiti, no
// module cache), so nothing here keeps state in a module variable: the
// state of the process lives in one registry on globalThis.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Host } from "./host.js";
import { bridgeChildBus } from "./bridge.js";

/** The absolute path of the child extension: what PiChild.args loads. */
export const CHILD_EXTENSION = fileURLToPath(new URL("../pi/child.js", import.meta.url));

/** The customType of the messages the extensions give the agent. */
export const MESSAGE_TYPE = "diagrelay";

/** How often a nested child asks for its own thread's mailbox (ms): within 3 s (SPEC §11.3). */
export const CHILD_MAILBOX_POLL = 1000;

/** How often the root Host's mailbox is read besides the events (ms). */
export const ROOT_MAILBOX_POLL = 1000;

const KEY = Symbol.for("diagrelay.pi.registry/1");

/**
 * The process-wide state.
 * @typedef {{
 *   parent: null | {claim: object, pi: any, ui: any, data: string, temporary: boolean, mode: string},
 *   host: null | Promise<Host>,
 *   child: null | {bridge: import("./bridge.js").Bridge, pi: any, path: string, poll: any},
 *   delivered: Set<number>,
 *   draining: null | Promise<void>,
 *   again: boolean,
 * }} Registry
 */

/** @returns {Registry} */
export function registry() {
  const g = /** @type {any} */ (globalThis);
  g[KEY] ??= { parent: null, host: null, child: null, delivered: new Set(), draining: null, again: false };
  return g[KEY];
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
 * call on a captured `pi` then throws, as docs/extensions.md says), and
 * print mode lets the event loop empty ("beforeExit"). Whichever comes
 * first runs fn. Call it from a session_shutdown handler. Its timer never
 * holds the event loop.
 * @param {any} pi
 * @param {() => unknown} fn
 */
export function afterShutdown(pi, fn) {
  let done = false;
  const run = () => {
    if (done) return;
    done = true;
    clearInterval(timer);
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
  process.on("beforeExit", run);
}

/** isStale tells whether pi is an extension API pi has invalidated (its session ended). */
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
 * deliver gives each unacknowledged mailbox message of recipient to the
 * agent as a non-waking message (deliverAs "nextTurn"), then acknowledges
 * the ones pi accepted. A message is never given twice in one process.
 * Drains run one at a time; a drain asked for meanwhile runs after.
 * @param {{read: (r: string) => Promise<any[]>, ack: (r: string, ids: number[]) => Promise<number>}} box
 * @param {string} recipient
 * @param {any} pi
 */
export function deliver(box, recipient, pi) {
  const reg = registry();
  if (reg.draining) {
    reg.again = true;
    return reg.draining;
  }
  reg.draining = (async () => {
    do {
      reg.again = false;
      const messages = await box.read(recipient);
      const accepted = [];
      for (const m of messages) {
        if (!reg.delivered.has(m.id)) {
          try {
            pi.sendMessage({ customType: MESSAGE_TYPE, content: m.text, display: true }, { deliverAs: "nextTurn" });
          } catch {
            break; // pi is gone or not ready: the message stays unacknowledged for the next drain or run
          }
          reg.delivered.add(m.id);
        }
        accepted.push(m.id);
      }
      if (accepted.length > 0) await box.ack(recipient, accepted);
    } while (reg.again);
  })().finally(() => {
    reg.draining = null;
  });
  return reg.draining;
}

/** The root Host of this process, started once (SPEC §11.3). */
function rootHost(pi) {
  const reg = registry();
  if (reg.host) return reg.host;
  const parent = reg.parent;
  const where = parent ? { data: parent.data, temporary: parent.temporary } : sessionDataDir(undefined);
  reg.host = (async () => {
    if (!where.data) where.data = fs.mkdtempSync(path.join(os.tmpdir(), "diagrelay-pi-"));
    fs.mkdirSync(where.data, { recursive: true, mode: 0o700 });
    fs.chmodSync(where.data, 0o700);
    // Unix socket paths are limited to about 100 bytes: a short directory of its own.
    const sockDir = fs.mkdtempSync(path.join(os.tmpdir(), "drpi-"));
    let host;
    try {
      host = await Host.start({ data: where.data, socket: path.join(sockDir, "s"), mode: parent?.mode ?? "rpc" });
    } catch (err) {
      fs.rmSync(sockDir, { recursive: true, force: true });
      if (where.temporary) fs.rmSync(where.data, { recursive: true, force: true });
      throw err;
    }
    host.on("notify", (n) => {
      try {
        registry().parent?.ui?.notify(n.message, n.notifyType);
      } catch {
        // a stale ui: the message path still carries the report
      }
    });
    const drain = () => deliver({ read: (r) => host.readMailbox(r), ack: (r, ids) => host.ack(r, ids) }, "/root", registry().parent?.pi ?? pi).catch(() => {});
    // The service observes a delivery before it writes the mailbox
    // (relay/runtime.go), so "delivered" alone can come too early: the
    // notification that follows the write ("notified", "held") asks again,
    // and so does a poll each ROOT_MAILBOX_POLL ms (print mode has no
    // notifications).
    host.on("event", (e) => {
      if (["delivered", "notified", "held", "lost"].includes(e?.kind)) drain();
    });
    const poll = setInterval(drain, ROOT_MAILBOX_POLL);
    poll.unref();
    host.on("exit", () => {
      clearInterval(poll);
      fs.rmSync(sockDir, { recursive: true, force: true });
      if (where.temporary) fs.rmSync(where.data, { recursive: true, force: true });
      if (registry().host === started) registry().host = null;
    });
    await host.subscribe();
    await drain(); // what a previous run left unacknowledged
    return host;
  })();
  const started = reg.host;
  started.catch(() => {
    if (registry().host === started) registry().host = null;
  });
  return started;
}

/** startRootHostIfResumed starts the Host now (a resumed session's mailbox); errors are left to the next open. */
export async function startRootHostIfResumed(pi) {
  await rootHost(pi).catch(() => {});
}

/** stopRootHost stops the Host, if one was started (the parent extension's shutdown). */
export async function stopRootHost() {
  const reg = registry();
  const p = reg.host;
  reg.host = null;
  if (!p) return;
  const host = await p.catch(() => null);
  await host?.stop();
}

/** The root Host if it is running, else null (for /diagrelay). */
export function runningHost() {
  return registry().host;
}

/**
 * PiChild is one child runtime opened through hostFor(pi).
 */
export class PiChild {
  #ops;
  /** @type {Set<import("./bridge.js").Bridge>} */
  #attached = new Set();

  constructor(path, env, ops) {
    /** The child's thread path. */
    this.path = path;
    /** The variables to add to the child's environment. */
    this.env = env;
    /** The arguments to put first on a child `pi` command line. */
    this.args = ["-e", CHILD_EXTENSION];
    this.#ops = ops;
  }

  /** status is the thread's status: diagnostics (20 newest) and drop counts. */
  status() {
    return this.#ops.status(this.path);
  }

  /**
   * attach bridges the event bus of a child session created in this
   * process (pi's SDK createAgentSession with the bus given to its
   * DefaultResourceLoader). Close the bridge when that session is disposed;
   * close() closes it too.
   * @param {{on(topic: string, fn: (data: unknown) => void): () => void}} events
   */
  async attach(events) {
    const bridge = await bridgeChildBus(events, { socket: this.env.DIAGRELAY_SOCKET, token: this.env.DIAGRELAY_TOKEN });
    this.#attached.add(bridge);
    return bridge;
  }

  /** close closes the attached bridges (bounded) and then the runtime. */
  async close() {
    await Promise.all([...this.#attached].map((b) => b.close()));
    this.#attached.clear();
    await this.#ops.close(this.path);
  }
}

/**
 * hostFor returns the Host of this pi process as a subagent extension sees
 * it. In a top-level session it is the root Host that the parent extension
 * owns (started on first use). In a hosted child it is that child's own
 * connection: it opens grandchildren strictly below the child's path, and
 * the child's own mailbox is then delivered to its agent.
 * @param {any} pi the extension's pi API
 */
export function hostFor(pi) {
  return {
    /**
     * @param {string} threadPath
     * @param {{parent?: string, owner?: string}} [options]
     */
    async open(threadPath, { parent, owner } = {}) {
      const params = { path: threadPath };
      if (parent !== undefined) params.parent = parent;
      if (owner !== undefined) params.owner = owner;
      if (hostedChild()) return openNested(pi, params);
      const host = await rootHost(pi);
      const { token } = await host.open(threadPath, { parent, owner });
      return new PiChild(threadPath, host.childEnv(token), {
        status: (p) => host.status(p),
        close: (p) => host.close(p),
      });
    },
    /** threads lists the session's threads (the root Host only). */
    async threads() {
      if (hostedChild()) throw new Error("diagrelay: a hosted child cannot list the host's threads");
      return (await rootHost(pi)).threads();
    },
  };
}

async function openNested(pi, params) {
  const reg = registry();
  const child = reg.child;
  if (!child) {
    throw Object.assign(new Error("diagrelay: this hosted child has no connection: load the child extension first (PiChild.args)"), { code: "ERR_DIAGRELAY_NOT_HOSTED" });
  }
  const { token } = await child.bridge._call("runtime.open", params);
  startChildMailbox(child);
  return new PiChild(params.path, { DIAGRELAY_SOCKET: process.env.DIAGRELAY_SOCKET ?? "", DIAGRELAY_TOKEN: token }, {
    status: (p) => child.bridge._call("thread.status", { path: p }),
    close: async (p) => {
      await child.bridge._call("runtime.close", { path: p });
    },
  });
}

/**
 * startChildMailbox delivers the hosted child's own thread's mailbox (the
 * reports of the children it opened) to its agent, as the parent extension
 * does for /root: asked every CHILD_MAILBOX_POLL ms while the bridge lives.
 * @param {NonNullable<Registry["child"]>} child
 */
export function startChildMailbox(child) {
  if (child.poll) return;
  const box = {
    read: async (r) => (await child.bridge._call("mailbox.read", { recipient: r })).messages,
    ack: async (r, ids) => (await child.bridge._call("mailbox.ack", { recipient: r, ids })).acked,
  };
  child.poll = setInterval(() => {
    if (!child.bridge.connected) {
      clearInterval(child.poll);
      return;
    }
    deliver(box, child.path, child.pi).catch(() => {});
  }, CHILD_MAILBOX_POLL);
  child.poll.unref();
}
