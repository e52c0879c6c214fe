// JSON-RPC 2.0 over a byte stream, one JSON object per line (the framing of
// docs/protocol.md). One Peer per connection: integer ids, replies matched to
// their calls, notifications handed to a callback, every pending call
// rejected when the stream ends.

import { MAX_DEPTH, MAX_FRAME, depth, stringify } from "./json.js";

/** The error a call rejects with when the service answers with an error. */
export class RPCError extends Error {
  /**
   * @param {number} code the JSON-RPC error code
   * @param {string} message the service's message
   * @param {string} method the method that was called
   */
  constructor(code, message, method) {
    super(`${message} (${code})`);
    this.name = "RPCError";
    this.code = code;
    this.method = method;
  }
}

// The service reads frames of at most 64 KiB (newline excluded); replies can
// be larger (mailbox.read), but a line this long is not a diagrelay reply.
const MAX_REPLY_LINE = 64 << 20;

export class Peer {
  /**
   * @param {import("node:stream").Readable} readable
   * @param {import("node:stream").Writable} writable
   * @param {{onNotify?: (method: string, params: unknown) => void, onClose?: (err: Error) => void, onStray?: (err: Error) => void, closedError?: () => Error}} hooks
   */
  constructor(readable, writable, hooks = {}) {
    this.readable = readable;
    this.writable = writable;
    this.hooks = hooks;
    /** @type {Map<number, {resolve: (v: unknown) => void, reject: (e: Error) => void, method: string}>} */
    this.pending = new Map();
    this.nextID = 0;
    this.buf = "";
    /** @type {Error | null} why the peer is closed; null while open */
    this.closed = null;
    this.corked = false;
    readable.setEncoding("utf8");
    readable.on("data", (chunk) => this.#onData(chunk));
    const closed = () => this.fail(hooks.closedError?.() ?? Object.assign(new Error("diagrelay: the service closed the connection"), { code: "ERR_DIAGRELAY_CLOSED" }));
    readable.on("end", closed);
    readable.on("close", closed);
    readable.on("error", (err) => this.fail(err));
    if (/** @type {unknown} */ (writable) !== readable) writable.on("error", (err) => this.fail(hooks.closedError?.() ?? err));
  }

  /**
   * call sends a request and resolves with its result. params undefined
   * sends no "params" member at all. A frame the service could not answer
   * by id (over 64 KiB, nested deeper than 64) is refused here, not sent.
   * @param {string} method
   * @param {unknown} [params]
   * @returns {Promise<any>}
   */
  call(method, params) {
    let text;
    try {
      text = stringify(params);
    } catch (err) {
      return Promise.reject(err);
    }
    if (text !== undefined && depth(text) > MAX_DEPTH - 1) {
      return Promise.reject(new RangeError(`${method}: params nested deeper than the service reads (${MAX_DEPTH})`));
    }
    return this.callEncoded(method, text);
  }

  /**
   * callEncoded is call with params already encoded by json.stringify
   * (undefined: no params) and known to fit (see fit.js).
   * @param {string} method
   * @param {string | undefined} paramsJSON
   * @returns {Promise<any>}
   */
  callEncoded(method, paramsJSON) {
    if (this.closed) return Promise.reject(this.closed);
    const id = ++this.nextID;
    const line = encode(id, method, paramsJSON);
    if (Buffer.byteLength(line) - 1 > MAX_FRAME) {
      return Promise.reject(new RangeError(`${method}: a frame of ${Buffer.byteLength(line) - 1} bytes is over the service's 64 KiB`));
    }
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      this.#write(line);
    });
  }

  // Frames written in one turn of the event loop leave in one write: a
  // bridge forwarding a burst of synchronous reports costs one syscall.
  #write(line) {
    const w = this.writable;
    if (!this.corked && typeof w.cork === "function") {
      this.corked = true;
      w.cork();
      process.nextTick(() => {
        this.corked = false;
        w.uncork();
      });
    }
    w.write(line);
  }

  #onData(chunk) {
    this.buf += chunk;
    let nl;
    while ((nl = this.buf.indexOf("\n")) >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      this.#onLine(line);
      if (this.closed) return;
    }
    if (this.buf.length > MAX_REPLY_LINE) this.fail(new Error("the service sent a line over 64 MiB"));
  }

  #onLine(line) {
    if (line.trim() === "") return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      this.hooks.onStray?.(new Error(`the service sent a line that is not JSON: ${line.slice(0, 200)}`));
      return;
    }
    if (msg === null || typeof msg !== "object") return;
    if (typeof msg.method === "string" && msg.id === undefined) {
      this.hooks.onNotify?.(msg.method, msg.params);
      return;
    }
    const p = typeof msg.id === "number" ? this.pending.get(msg.id) : undefined;
    if (!p) {
      // An error with id null answers a frame the service could not read;
      // this client never sends one, so it is reported, not matched.
      if (msg.error) this.hooks.onStray?.(new RPCError(msg.error.code, String(msg.error.message), "(unmatched)"));
      return;
    }
    this.pending.delete(msg.id);
    if (msg.error) p.reject(new RPCError(msg.error.code, String(msg.error.message), p.method));
    else p.resolve(msg.result);
  }

  /** fail closes the peer: every pending call rejects with err. Idempotent. */
  fail(err) {
    if (this.closed) return;
    this.closed = err;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(err);
    this.hooks.onClose?.(err);
  }
}

/**
 * encode returns the frame of a request, newline included.
 * @param {number} id
 * @param {string} method
 * @param {string | undefined} paramsJSON params encoded by json.stringify
 */
export function encode(id, method, paramsJSON) {
  const head = `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)}`;
  return (paramsJSON === undefined ? head : `${head},"params":${paramsJSON}`) + "}\n";
}
