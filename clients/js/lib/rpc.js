// JSON-RPC 2.0 over a byte stream, one JSON object per line (the framing of
// docs/protocol.md). One Peer per connection: integer ids, replies matched to
// their calls, notifications handed to a callback, every pending call
// rejected when the stream ends.

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
    if (writable !== readable) writable.on("error", (err) => this.fail(hooks.closedError?.() ?? err));
  }

  /**
   * call sends a request and resolves with its result. params undefined
   * sends no "params" member at all.
   * @param {string} method
   * @param {unknown} [params]
   * @returns {Promise<any>}
   */
  call(method, params) {
    if (this.closed) return Promise.reject(this.closed);
    const id = ++this.nextID;
    const line = encode(id, method, params);
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
 * @param {unknown} params
 */
export function encode(id, method, params) {
  const req = { jsonrpc: "2.0", id, method };
  if (params !== undefined) req.params = params;
  return JSON.stringify(req) + "\n";
}
