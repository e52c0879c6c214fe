// The bridge: a child session's pi event bus on one side, diagrelay serve on
// the other. Extensions keep doing what the original documents: emit the
// probe with a respond callback and, if hosted, emit the report, both
// synchronously. The bridge answers the probe from the service's own
// diagnostic.probe reply and forwards each report as diagnostic.report.

import { openSession, closeSocket, isNotHosted } from "./child.js";
import { reportParams } from "./fit.js";
import { RPCError } from "./rpc.js";
import { Emitter } from "./listeners.js";

export const PROBE_TOPIC = "pi-subagent-manager:diagnostic:probe";
export const REPORT_TOPIC = "pi-subagent-manager:diagnostic";

/** Reports sent and not yet answered, at most; past it they are dropped. */
export const MAX_UNANSWERED = 1000;

/** close's default bound, in milliseconds (docs/pi.md). */
export const CLOSE_TIMEOUT = 2000;

// JSON-RPC codes after which this connection can never report again.
const CODE_UNAUTHENTICATED = -32001;
const CODE_REVOKED = -32003;

export class Bridge extends Emitter {
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
  /** @type {Promise<void> | null} */
  #closed = null;
  /** Calls of any kind waiting for an answer: while > 0 the socket holds the event loop. */
  #busy = 0;

  constructor(session, events) {
    super();
    this.#sock = session.sock;
    this.#peer = session.peer;
    const { version, protocol } = session.capability ?? {};
    this.#cap = { version, protocol };
    /** The service's answer to session.hello: {role, path, generation}. */
    this.session = session.hello;
    // An idle bridge never keeps its process alive (a `pi -p` child must
    // exit when its work is done); a call waiting for its answer does.
    this.#sock.unref();
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

  // on (Emitter) subscribes to "error" (the connection was lost, the token
  // revoked, or an extension's respond callback threw) or "refused" (the
  // service answered a report with an error). Listeners run on a later
  // tick, never inside an extension's emit.
  #emit(event, ...args) {
    if (this.listenersOf(event).length === 0) return;
    process.nextTick(() => {
      for (const fn of this.listenersOf(event)) fn(...args);
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
    const p = this.#track(this.#peer.callEncoded("diagnostic.report", reportParams(payload))).then(
      () => {},
      (err) => {
        if (!(err instanceof RPCError)) {
          // The connection went (#lose reports it); a destroy counted it already.
          if (this.#inflight.delete(p)) this.unanswered++;
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

  // #track holds the event loop while call is unanswered.
  #track(call) {
    if (this.#busy++ === 0) this.#sock.ref();
    const done = () => {
      if (--this.#busy === 0) this.#sock.unref();
    };
    call.then(done, done);
    return call;
  }

  // For diagrelay/pi only (not part of the API): a host method on this
  // child's own connection (a nested child opens its children with it).
  _call(method, params) {
    if (this.#closing) return Promise.reject(Object.assign(new Error("diagrelay: the bridge is closing"), { code: "ERR_DIAGRELAY_CLOSED" }));
    return this.#track(this.#peer.call(method, params));
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

  /**
   * close stops answering the probe at once (an extension that probes now
   * sees no host and falls back; a report emitted now is dropped and
   * counted), waits for the answers of the reports already forwarded, at
   * most options.timeout ms (default 2000), then unsubscribes and closes.
   * What is still unanswered at the bound is counted in `unanswered` and
   * the socket destroyed. Calling it again returns the same promise.
   * @param {{timeout?: number}} [options]
   */
  close({ timeout = CLOSE_TIMEOUT } = {}) {
    if (this.#closed) return this.#closed;
    this.#closing = true;
    const deadline = Date.now() + Math.max(0, timeout);
    this.#closed = (async () => {
      let timer;
      const bound = new Promise((resolve) => {
        timer = setTimeout(() => resolve(false), Math.max(0, timeout));
      });
      const flushed = await Promise.race([this.flush().then(() => true), bound]);
      clearTimeout(timer);
      this.#unsubscribe();
      if (!flushed) {
        this.destroy();
        return;
      }
      await closeSocket(this.#sock, Math.max(1, deadline - Date.now()));
    })();
    return this.#closed;
  }

  /**
   * destroy ends at once: the probe is no longer answered, both handlers
   * are unsubscribed, the reports still unanswered are counted in
   * `unanswered`, and the socket is destroyed.
   */
  destroy() {
    this.#closing = true;
    this.#closed ??= Promise.resolve();
    this.#unsubscribe();
    this.unanswered += this.#inflight.size;
    this.#inflight.clear();
    this.#sock.destroy();
  }
}

/**
 * bridgeChildBus connects to diagrelay serve (options.socket/token, else
 * DIAGRELAY_SOCKET/DIAGRELAY_TOKEN), says hello, probes, and then installs
 * the probe responder and the report forwarder on events. Connect, hello
 * and probe are bounded by options.timeout (default 2000 ms). With
 * options.optional it resolves to null where the session is not hosted (see
 * isNotHosted in child.js) instead of rejecting.
 * @param {{on(topic: string, fn: (data: unknown) => void): () => void}} events
 * @param {{socket?: string, token?: string, timeout?: number, optional?: boolean}} [options]
 */
export async function bridgeChildBus(events, options = {}) {
  if (!events || typeof events.on !== "function") throw new TypeError("bridgeChildBus: events must have on(topic, fn)");
  /** @type {Bridge | undefined} */
  let bridge;
  const hooks = {
    onClose: (err) => bridge?._lost(err),
    onStray: (err) => bridge?._stray(err),
  };
  let session;
  try {
    session = await openSession(options, hooks);
  } catch (err) {
    if (options.optional && isNotHosted(err)) return null;
    throw err;
  }
  try {
    bridge = new Bridge(session, events);
  } catch (err) {
    session.sock.destroy(); // a bus whose on() throws: nothing stays open
    throw err;
  }
  if (session.peer.closed) bridge._lost(session.peer.closed);
  return bridge;
}
