// The bridge: a child session's pi event bus on one side, diagrelay serve on
// the other. Extensions keep doing what the original documents: emit the
// probe with a respond callback and, if hosted, emit the report, both
// synchronously. The bridge answers the probe from the service's own
// diagnostic.probe reply and forwards each report as diagnostic.report.

import { openSession, closeSocket } from "./child.js";
import { reportParams } from "./fit.js";
import { RPCError } from "./rpc.js";
import { Listeners } from "./listeners.js";

export const PROBE_TOPIC = "pi-subagent-manager:diagnostic:probe";
export const REPORT_TOPIC = "pi-subagent-manager:diagnostic";

/** Reports sent and not yet answered, at most; past it they are dropped. */
export const MAX_UNANSWERED = 1000;

// JSON-RPC codes after which this connection can never report again.
const CODE_UNAUTHENTICATED = -32001;
const CODE_REVOKED = -32003;

export class Bridge {
  /** Reports not forwarded: over the bound, or emitted after the connection was lost. */
  dropped = 0;
  /** Reports the service answered with an error (an invalid report: -32602). */
  refused = 0;
  /** Reports forwarded whose answer never came because the connection was lost. */
  unanswered = 0;

  #sock;
  #peer;
  #cap;
  /** @type {Set<Promise<void>>} */
  #inflight = new Set();
  /** @type {Array<() => void>} */
  #offs = [];
  /** @type {Error | null} */
  #lost = null;
  #closing = false;
  #listeners = new Listeners();

  constructor(session, events) {
    this.#sock = session.sock;
    this.#peer = session.peer;
    const { version, protocol } = session.capability ?? {};
    this.#cap = { version, protocol };
    /** The service's answer to session.hello: {role, path, generation}. */
    this.session = session.hello;
    // Installed only now: the service said hello and answered the probe.
    try {
      this.#offs.push(events.on(PROBE_TOPIC, (req) => this.#onProbe(req)));
      this.#offs.push(events.on(REPORT_TOPIC, (payload) => this.#onReport(payload)));
    } catch (err) {
      this.#closing = true; // a handler already installed answers nothing
      this.#unsubscribe();
      throw err;
    }
  }

  #unsubscribe() {
    for (const off of this.#offs.splice(0)) {
      try {
        if (typeof off === "function") off();
      } catch {
        // A bus whose unsubscribe throws still loses our handlers' effect:
        // #closing makes them do nothing.
      }
    }
  }

  /** The capability the probe answers with: the service's diagnostic.probe reply. */
  get capability() {
    return { ...this.#cap };
  }

  /** Whether the probe answers "hosted": connected, not lost, not closed. */
  get connected() {
    return this.#lost === null && !this.#closing;
  }

  /**
   * on subscribes to "error" (the connection was lost, the token revoked,
   * or an extension's respond callback threw) or "refused" (the service
   * answered a report with an error). Listeners run on a later tick, never
   * inside an extension's emit.
   */
  on(event, fn) {
    this.#listeners.on(event, fn);
    return this;
  }

  off(event, fn) {
    this.#listeners.off(event, fn);
    return this;
  }

  #emit(event, ...args) {
    if (this.#listeners.of(event).length === 0) return;
    process.nextTick(() => {
      for (const fn of this.#listeners.of(event)) fn(...args);
    });
  }

  // A synchronous answer, or none at all: after a lost connection the
  // extension sees no host and falls back, as in a top-level session.
  #onProbe(req) {
    if (!this.connected) return;
    try {
      const respond = req?.respond;
      if (typeof respond === "function") respond({ ...this.#cap });
    } catch (err) {
      this.#emit("error", err instanceof Error ? err : new Error(String(err)));
    }
  }

  #onReport(payload) {
    if (!this.connected || this.#inflight.size >= MAX_UNANSWERED) {
      this.dropped++;
      return;
    }
    const p = this.#peer.callEncoded("diagnostic.report", reportParams(payload)).then(
      () => {},
      (err) => {
        if (!(err instanceof RPCError)) {
          this.unanswered++; // the connection went; #lose reports it
          return;
        }
        this.refused++;
        this.#emit("refused", err);
        if (err.code === CODE_REVOKED || err.code === CODE_UNAUTHENTICATED) this.#lose(err);
      },
    );
    this.#inflight.add(p);
    p.then(() => this.#inflight.delete(p));
  }

  // For bridgeChildBus only (not part of the API).
  /** @param {Error} err */
  _lost(err) {
    this.#lose(err);
  }

  /** @param {Error} err */
  _stray(err) {
    this.#emit("error", err);
  }

  #lose(err) {
    if (this.#lost || this.#closing) return;
    this.#lost = err;
    const e = new Error(`diagrelay: lost the service (${err.message}); extensions now see no host`, { cause: err });
    this.#emit("error", e);
  }

  /** flush resolves when every report forwarded so far has its answer. */
  async flush() {
    while (this.#inflight.size > 0) await Promise.all([...this.#inflight]);
  }

  /** close flushes, unsubscribes both handlers and closes the connection. */
  async close() {
    if (this.#closing) return;
    await this.flush();
    this.#closing = true;
    this.#unsubscribe();
    await closeSocket(this.#sock);
  }
}

/**
 * bridgeChildBus connects to diagrelay serve (options.socket/token, else
 * DIAGRELAY_SOCKET/DIAGRELAY_TOKEN), says hello, probes, and then installs
 * the probe responder and the report forwarder on events.
 * @param {{on(topic: string, fn: (data: unknown) => void): () => void}} events
 * @param {{socket?: string, token?: string, timeout?: number}} [options]
 */
export async function bridgeChildBus(events, options = {}) {
  if (!events || typeof events.on !== "function") throw new TypeError("bridgeChildBus: events must have on(topic, fn)");
  /** @type {Bridge | undefined} */
  let bridge;
  const hooks = {
    onClose: (err) => bridge?._lost(err),
    onStray: (err) => bridge?._stray(err),
  };
  const session = await openSession(options, hooks);
  try {
    bridge = new Bridge(session, events);
  } catch (err) {
    session.sock.destroy(); // a bus whose on() throws: nothing stays open
    throw err;
  }
  if (session.peer.closed) bridge._lost(session.peer.closed);
  return bridge;
}
