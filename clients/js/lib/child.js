// The child's side of the service: connect to the socket, say hello with the
// runtime's token, ask diagnostic.probe, then report. connectChild is this
// without a bus; the bridge (bridge.js) is built on the same session.

import net from "node:net";
import { Peer } from "./rpc.js";
import { reportParams } from "./fit.js";
import { compatible } from "./version.js";

/** The first release with child diagnostics: the default minimum version. */
export const MIN_VERSION = "1.1.0";

/** Connect, hello and probe together, at most (ms): a stalled serve cannot hold a start-up. */
export const CONNECT_TIMEOUT = 2000;

/**
 * notHosted is the error for a child with nowhere to report.
 * @param {string} why
 */
function notHosted(why) {
  return Object.assign(new Error(`diagrelay: not hosted: ${why}`), { code: "ERR_DIAGRELAY_NOT_HOSTED" });
}

/**
 * openSession connects, says hello and probes. It rejects (never hangs:
 * options.timeout, default 2 s, bounds the whole handshake) with the
 * socket's error, or an RPCError whose code is the JSON-RPC code.
 * @param {{socket?: string, token?: string, timeout?: number}} options
 * @param {{onNotify?: (method: string, params: unknown) => void, onClose?: (err: Error) => void, onStray?: (err: Error) => void}} hooks
 */
export async function openSession(options, hooks) {
  const socketPath = options.socket ?? process.env.DIAGRELAY_SOCKET;
  // A token read from a file or an environment often carries a newline.
  const token = (options.token ?? process.env.DIAGRELAY_TOKEN ?? "").trim();
  if (!socketPath || !token) throw notHosted("DIAGRELAY_SOCKET and DIAGRELAY_TOKEN must both be set");
  const timeout = options.timeout ?? CONNECT_TIMEOUT;

  /** @type {net.Socket} */
  let sock = net.createConnection(socketPath);
  let timer;
  let timedOut = false;
  const expired = new Promise((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      const err = Object.assign(new Error(`diagrelay: no answer from ${socketPath} within ${timeout} ms`), { code: "ETIMEDOUT" });
      sock.destroy();
      reject(err);
    }, timeout);
  });
  try {
    // A full listen backlog answers a Unix socket connect with EAGAIN, not
    // a wait: try again, a little later each time, within the same bound.
    for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
      const s = sock;
      const err = await Promise.race([
        new Promise((resolve) => {
          s.once("connect", () => resolve(null));
          s.once("error", (e) => resolve(e));
        }),
        expired,
      ]);
      if (!err) break;
      if (/** @type {NodeJS.ErrnoException} */ (err).code !== "EAGAIN" || timedOut) throw err;
      await Promise.race([new Promise((resolve) => setTimeout(resolve, wait)), expired]);
      sock = net.createConnection(socketPath);
    }
    const peer = new Peer(sock, sock, hooks);
    const hello = await Promise.race([peer.call("session.hello", { token }), expired]);
    const capability = await Promise.race([peer.call("diagnostic.probe"), expired]);
    return { sock, peer, hello, capability };
  } catch (err) {
    sock.destroy();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * closeSocket ends the connection and resolves once it is closed, at most
 * backstop ms later (then the socket is destroyed).
 * @param {net.Socket} sock
 * @param {number} [backstop]
 */
export function closeSocket(sock, backstop = 2000) {
  if (sock.closed) return Promise.resolve();
  return new Promise((resolve) => {
    sock.once("close", () => resolve(undefined));
    sock.ref(); // an awaited close holds the loop until it is done, at most backstop ms
    sock.end();
    // The service closes its end when it reads ours; this is a backstop.
    setTimeout(() => sock.destroy(), backstop).unref();
  });
}

/**
 * isNotHosted tells whether err means "this session has no live host":
 * no variables, no socket or nobody listening, a token the service does not
 * know or revoked, or no answer in time. Anything else is a real fault.
 * @param {any} err
 */
export function isNotHosted(err) {
  const code = err?.code;
  return code === "ERR_DIAGRELAY_NOT_HOSTED" || code === "ENOENT" || code === "ECONNREFUSED" || code === "ENOTSOCK" ||
    code === "EACCES" || code === "ETIMEDOUT" || code === "ERR_DIAGRELAY_CLOSED" || code === "ECONNRESET" || code === "EPIPE" ||
    code === -32001 || code === -32003 || code === -32007;
}

/** A child connection without a bus: probe and report directly. */
export class Child {
  #sock;
  #peer;

  constructor(session) {
    this.#sock = session.sock;
    this.#peer = session.peer;
    /** The service's answer to session.hello: {role, path, generation}. */
    this.session = session.hello;
    /** The service's diagnostic.probe reply at connect time, as it came. */
    this.capability = session.capability;
  }

  /**
   * probe asks the service again and returns its {version, protocol} if it
   * is protocol 1 with a version >= minVersion, else null.
   * @param {string} [minVersion]
   */
  async probe(minVersion = MIN_VERSION) {
    const cap = await this.#peer.call("diagnostic.probe");
    if (!compatible(cap, minVersion)) return null;
    return { version: cap.version, protocol: cap.protocol };
  }

  /**
   * report sends one diagnostic and resolves when the service has taken it
   * (a policy drop looks the same). An invalid report rejects with the
   * service's -32602.
   * @param {string} level
   * @param {string} message
   * @param {string} [source]
   */
  async report(level, message, source) {
    const payload = source === undefined ? { level, message } : { level, message, source };
    await this.#peer.callEncoded("diagnostic.report", reportParams(payload));
  }

  /** close ends the connection. */
  close() {
    return closeSocket(this.#sock);
  }
}

/**
 * connectChild connects to diagrelay serve as a child.
 * @param {{socket?: string, token?: string, timeout?: number}} [options]
 */
export async function connectChild(options = {}) {
  return new Child(await openSession(options, {}));
}
