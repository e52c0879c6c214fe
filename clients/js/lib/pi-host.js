// The one Host of a pi process and what subagent extensions see of it
// (hostFor, PiChild, the host probe). Internal to the package: diagrelay/pi
// (lib/pi.js) exports the public names. docs/pi.md says how each rule of
// "diagrelay in pi" is met.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Host } from "./host.js";
import { bridgeChildBus } from "./bridge.js";
import { deliver } from "./pi-deliver.js";
import { boxFor, hostedChild, mailboxKey, newBox, notifyParent, registry } from "./pi-registry.js";
import { run } from "./pi-run.js";
import { announceParent, withdrawParent } from "./pi-spawn.js";

/** The absolute path of the child extension: what PiChild.args loads. */
export const CHILD_EXTENSION = fileURLToPath(new URL("../pi/child.js", import.meta.url));

/** The topic of the host probe on a session's bus: `emit(HOST_PROBE_TOPIC, {respond(host) {…}})`. */
export const HOST_PROBE_TOPIC = "diagrelay:host:probe";

/** The package's version, as the host probe answers it. */
export const VERSION = /** @type {string} */ (JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8")).version);

/** How often a nested child asks for its own thread's mailbox (ms): within 3 s. */
export const CHILD_MAILBOX_POLL = 1000;

/** How often the root Host's mailbox is read besides the events (ms). */
export const ROOT_MAILBOX_POLL = 1000;

/** notHosted is the error of an open where this process has no host to give. */
function notHosted(/** @type {string} */ why) {
  return Object.assign(new Error(`diagrelay: not hosted: ${why}`), { code: "ERR_DIAGRELAY_NOT_HOSTED" });
}

/**
 * The root Host of this process, started once by whoever asks first. Only
 * a session that claimed the process (the parent extension, in a session
 * with a UI) has one: elsewhere nobody would hear its notifications.
 * @returns {Promise<Host>}
 */
function rootHost() {
  const reg = registry();
  if (reg.host) return reg.host;
  const parent = reg.parent;
  if (!parent) return Promise.reject(notHosted("no pi session with a UI owns this process (the parent extension is not loaded, or this is pi -p)"));
  const where = { data: parent.data, temporary: parent.temporary };
  /** @type {Promise<Host>} */
  const started = (async () => {
    if (!where.data) where.data = fs.mkdtempSync(path.join(os.tmpdir(), "diagrelay-pi-"));
    fs.mkdirSync(where.data, { recursive: true, mode: 0o700 });
    fs.chmodSync(where.data, 0o700);
    // Unix socket paths are limited to about 100 bytes: a short directory of its own.
    const sockDir = fs.mkdtempSync(path.join(os.tmpdir(), "drpi-"));
    const cleanup = () => {
      process.off("exit", cleanup);
      fs.rmSync(sockDir, { recursive: true, force: true });
      if (where.temporary) fs.rmSync(/** @type {string} */ (where.data), { recursive: true, force: true });
    };
    // pi often exits before the service's exit is seen: what we made goes then too.
    process.on("exit", cleanup);
    let host;
    try {
      host = await Host.start({ data: where.data, socket: path.join(sockDir, "s"), mode: "rpc" });
    } catch (err) {
      cleanup();
      throw err;
    }
    host.on("notify", (/** @type {any} */ n) => notifyParent(n.message, n.notifyType));
    const state = boxFor(mailboxKey(where.data));
    const drain = () =>
      deliver({ read: (r) => host.readMailbox(r), ack: (r, ids) => host.ack(r, ids) }, state, "/root", () => registry().parent?.pi);
    // The service observes a delivery before it writes the mailbox, so
    // "delivered" alone can come too early: the notification that follows
    // the write ("notified", "held") asks again, and so does a poll.
    host.on("event", (/** @type {any} */ e) => {
      if (["delivered", "notified", "held", "lost"].includes(e?.kind)) drain();
    });
    const poll = setInterval(drain, ROOT_MAILBOX_POLL);
    poll.unref();
    host.on("exit", (/** @type {number | null} */ code, /** @type {string | null} */ sig) => {
      clearInterval(poll);
      withdrawParent(host); // children started from now on find no dead socket
      cleanup();
      // stopRootHost lets go of the Host before it stops it: still ours means it died.
      if (registry().host !== started) return;
      registry().host = null;
      notifyParent(`diagrelay: the service exited (${sig ?? `code ${code}`}); children opened before it no longer report; the next child starts a new one`, "warning");
    });
    await host.subscribe();
    await announceParent(host); // DIAGRELAY_PARENT: children with no glue report (lib/pi-spawn.js)
    await drain(); // what a previous run left unacknowledged
    return host;
  })();
  reg.host = started;
  started.catch(() => {
    if (registry().host === started) registry().host = null;
  });
  return started;
}

/**
 * startedRootHost is the root Host, started if it was not: it rejects where
 * this process has none to give (no session with a UI owns it).
 */
export function startedRootHost() {
  return rootHost();
}

/** startRootHost starts the Host now (a resumed session's mailbox); a failure is left to the next open. */
export async function startRootHost() {
  await rootHost().catch(() => {});
}

/** stopRootHost stops the Host, if one was started (the parent extension's shutdown). */
export async function stopRootHost() {
  const reg = registry();
  const p = reg.host;
  reg.host = null;
  if (!p) return;
  const host = await p.catch(() => null);
  await host?.stop().catch(() => {});
}

/** The root Host if it is running, else null (for /diagrelay). */
export function runningHost() {
  return registry().host;
}

/**
 * A thread's status as the service gives it, or, once the service is gone,
 * the last one known marked stale.
 * @typedef {import("../index.js").ThreadStatus & {stale?: true}} PiThreadStatus
 */

/** One child runtime opened through hostFor(pi). */
export class PiChild {
  #ops;
  /** @type {Set<import("./bridge.js").Bridge>} */
  #attached = new Set();
  /** @type {PiThreadStatus | null} */
  #last = null;
  #closed = false;

  /**
   * @param {string} threadPath
   * @param {{DIAGRELAY_SOCKET: string, DIAGRELAY_TOKEN: string}} env
   * @param {{status: (p: string) => Promise<any>, close: (p: string) => Promise<void>}} ops
   */
  constructor(threadPath, env, ops) {
    /** The child's thread path. */
    this.path = threadPath;
    /** The variables to add to the child's environment. */
    this.env = env;
    /** The arguments to put first on a child `pi` command line. */
    this.args = ["-e", CHILD_EXTENSION];
    this.#ops = ops;
  }

  /**
   * status is the thread's status: diagnostics (20 newest) and drop counts.
   * It never rejects: once the service is gone it is the last status known
   * (or an empty one), with stale: true.
   * @returns {Promise<PiThreadStatus>}
   */
  async status() {
    try {
      this.#last = await this.#ops.status(this.path);
      return /** @type {PiThreadStatus} */ (this.#last);
    } catch {
      const empty = { path: this.path, parent: "", owner: "", open: false, diagnostics: [], dropped: { duplicate: 0, rate: 0, cap: 0, invalid: 0 }, redacted: {} };
      return /** @type {PiThreadStatus} */ ({ ...(this.#last ?? empty), stale: true });
    }
  }

  /**
   * attach bridges the event bus of a child session created in this
   * process (pi's SDK createAgentSession with the bus given to its
   * DefaultResourceLoader). It resolves to null when the service is gone.
   * Close the bridge when that session is disposed; close() closes it too.
   * @param {{on(topic: string, fn: (data: unknown) => void): () => void}} events
   * @returns {Promise<import("./bridge.js").Bridge | null>}
   */
  async attach(events) {
    if (this.#closed) return null;
    const bridge = await bridgeChildBus(events, { socket: this.env.DIAGRELAY_SOCKET, token: this.env.DIAGRELAY_TOKEN, optional: true });
    if (!bridge) return null;
    bridge.on("error", () => {}); // a lost service only means "not hosted" from now on
    this.#attached.add(bridge);
    return bridge;
  }

  /** close closes the attached bridges (bounded) and then the runtime; it never rejects. */
  async close() {
    this.#closed = true;
    await Promise.all([...this.#attached].map((b) => b.close().catch(() => {})));
    this.#attached.clear();
    await this.#ops.close(this.path).catch(() => {});
  }
}

/**
 * The Host of this pi process as a subagent extension sees it: what
 * hostFor(pi) returns and what the host probe answers.
 * @typedef {{
 *   version: string, protocol: 1,
 *   open: (path: string, options?: {parent?: string, owner?: string, bind?: boolean}) => Promise<PiChild>,
 *   run: (path: string, args: string[], options?: import("./pi-run.js").RunOptions) => Promise<import("./pi-run.js").RunResult>,
 *   threads: () => Promise<import("../index.js").ThreadSummary[]>,
 * }} PiHost
 */

/**
 * hostFor returns the Host of this pi process as a subagent extension sees
 * it. In a top-level session it is the root Host that the parent extension
 * owns (started on first use). In a hosted child it is that child's own
 * connection: it opens grandchildren strictly below the child's path, and
 * the child's own mailbox is then delivered to its agent.
 * @param {any} [_pi] the extension's pi API (the process's Host does not depend on it)
 * @returns {PiHost}
 */
export function hostFor(_pi) {
  /** @type {PiHost["open"]} */
  const open = async (threadPath, { parent, owner, bind } = {}) => {
    /** @type {{path: string, parent?: string, owner?: string, bind?: boolean}} */
    const params = { path: threadPath };
    if (parent !== undefined) params.parent = parent;
    if (owner !== undefined) params.owner = owner;
    if (bind !== undefined) params.bind = bind;
    if (hostedChild()) return openNested(params);
    const host = await rootHost();
    const { token } = await host.open(threadPath, { parent, owner, bind });
    return new PiChild(threadPath, host.childEnv(token), {
      status: (p) => host.status(p),
      close: (p) => host.close(p),
    });
  };
  return {
    version: VERSION,
    protocol: 1,
    open,
    run: (threadPath, args, options) => run(open, threadPath, args, options),
    async threads() {
      if (hostedChild()) throw new Error("diagrelay: a hosted child cannot list the host's threads");
      return (await rootHost()).threads();
    },
  };
}

/**
 * answerHostProbe installs on events the responder of the host probe: it
 * calls respond(hostFor(pi)) synchronously. The returned function removes it.
 * @param {{on(topic: string, fn: (data: any) => void): () => void}} events
 * @param {any} pi
 */
export function answerHostProbe(events, pi) {
  const host = hostFor(pi);
  return events.on(HOST_PROBE_TOPIC, (req) => {
    try {
      if (typeof req?.respond === "function") req.respond(host);
    } catch {
      // the asker's respond threw: its fault, not the emitter's
    }
  });
}

/** @param {{path: string, parent?: string, owner?: string, bind?: boolean}} params */
async function openNested(params) {
  const child = registry().child;
  if (!child) throw notHosted("this hosted child has no connection: load the child extension first (PiChild.args)");
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
 * @param {import("./pi-registry.js").HostedChild} child
 */
export function startChildMailbox(child) {
  if (child.poll) return;
  child.box ??= newBox();
  const box = {
    read: async (/** @type {string} */ r) => (await child.bridge._call("mailbox.read", { recipient: r })).messages,
    ack: async (/** @type {string} */ r, /** @type {number[]} */ ids) => (await child.bridge._call("mailbox.ack", { recipient: r, ids })).acked,
  };
  child.poll = setInterval(() => {
    if (!child.bridge.connected) {
      if (child.poll) clearInterval(child.poll);
      return;
    }
    deliver(box, child.box, child.path, () => child.pi);
  }, CHILD_MAILBOX_POLL);
  child.poll.unref();
}
