// The host's side: spawn `diagrelay serve --stdio --socket …`, speak
// JSON-RPC to it over the child process's stdin/stdout, hand its
// notifications to listeners, and stop it with SIGTERM.

import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import net from "node:net";
import path from "node:path";
import { Peer } from "./rpc.js";
import { Emitter } from "./listeners.js";
import { findBinary } from "./bin.js";

const DEFAULT_START_TIMEOUT = 10_000;
const DEFAULT_STOP_TIMEOUT = 10_000;
const STDERR_TAIL = 8 << 10;

/**
 * canConnect resolves true if something accepts a connection on socketPath.
 * @param {string} socketPath
 */
function canConnect(socketPath) {
  return new Promise((resolve) => {
    const c = net.createConnection(socketPath);
    c.once("connect", () => {
      c.destroy();
      resolve(true);
    });
    c.once("error", () => resolve(false));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Private data directories of running services (Host.start with neither
// data nor socket): each is removed when its service exits, and any left
// when this process exits.
const privateDirs = new Set();
const removeDir = (dir) => {
  privateDirs.delete(dir);
  fs.rmSync(dir, { recursive: true, force: true });
};
process.on("exit", () => privateDirs.forEach(removeDir));

export class Host extends Emitter {
  #proc;
  #peer;
  #stderr = "";
  /** @type {{code: number | null, signal: string | null} | null} */
  #exit = null;
  /** @type {Promise<void>} */
  #exited;

  /** @private Use Host.start. */
  constructor(proc, socket, data) {
    super();
    this.#proc = proc;
    /** The Unix socket children connect to. */
    this.socket = socket;
    /** The data directory (undefined: the service's default). */
    this.data = data;
    /** The service's process id. */
    this.pid = proc.pid;
    /** @type {{version: string, protocol: number} | undefined} The service's capabilities.probe answer at start. */
    this.capability = undefined;
    proc.stderr?.setEncoding("utf8");
    proc.stderr?.on("data", (chunk) => {
      this.#stderr = (this.#stderr + chunk).slice(-STDERR_TAIL);
    });
    this.#exited = new Promise((resolve) => {
      proc.once("exit", (code, signal) => {
        this.#exit = { code, signal };
        this.#peer.fail(this.#exitError());
        this.#emit("exit", code, signal);
        resolve();
      });
    });
    this.#peer = new Peer(proc.stdout, proc.stdin, {
      closedError: () => this.#exitError(),
      onNotify: (method, params) => {
        if (method === "ui.notify") this.#emit("notify", params);
        else if (method === "event") this.#emit("event", params);
      },
    });
  }

  #exitError() {
    const how = this.#exit ? ` (${this.#exit.signal ?? `code ${this.#exit.code}`})` : "";
    return Object.assign(new Error(`diagrelay serve exited${how}${this.#tail()}`), { code: "ERR_DIAGRELAY_EXITED" });
  }

  #tail() {
    const t = this.#stderr.trim();
    return t ? `: ${t.split("\n").slice(-5).join(" | ")}` : "";
  }

  // on (Emitter): on("notify", fn({thread, message, notifyType})),
  // on("event", fn(event)) (after subscribe()), on("exit", fn(code, signal)).
  #emit(event, ...args) {
    for (const fn of this.listenersOf(event)) fn(...args);
  }

  /**
   * start spawns the service and resolves once its socket accepts
   * connections and it answers on stdio; it rejects if the service exits
   * first, or after options.timeout ms (default 10 s, the process is killed).
   * With neither options.data nor options.socket the service runs on a
   * private data directory under os.tmpdir(), removed when it exits.
   */
  static async start(options = {}) {
    let own; // a private data directory, removed when the service exits
    if (options.data === undefined && options.socket === undefined) {
      own = fs.mkdtempSync(path.join(os.tmpdir(), "diagrelay-"));
      privateDirs.add(own);
    }
    const data = options.data ?? own;
    const socket = options.socket ?? (own ? path.join(own, "s") : data ? path.join(data, "diagrelay.sock") : undefined);
    if (!socket) throw new TypeError("Host.start: give options.socket or options.data");
    // Our poll below must not mistake another server for ours.
    if (await canConnect(socket)) throw new Error(`Host.start: another server is listening on ${socket}`);
    const bin = findBinary({ bin: options.bin });
    const args = ["serve", "--stdio", "--socket", socket];
    if (data !== undefined) args.push("--data", data);
    if (options.mode !== undefined) args.push("--mode", options.mode);
    if (options.bindPeer) args.push("--bind-peer");
    if (options.hostSocket !== undefined) args.push("--host-socket", options.hostSocket);
    const proc = spawn(bin, args, { stdio: ["pipe", "pipe", options.stderr === "inherit" ? "inherit" : "pipe"] });
    const spawned = await new Promise((resolve) => {
      proc.once("spawn", () => resolve(null));
      proc.once("error", (err) => resolve(err));
    });
    if (own) {
      if (spawned) removeDir(own);
      else proc.once("exit", () => removeDir(own));
    }
    if (spawned) throw Object.assign(new Error(`Host.start: cannot run ${bin}: ${spawned.message}`), { code: spawned.code });
    // A later error (a failed kill) must not crash the host process; the
    // exit event and the pipes report what matters.
    proc.on("error", () => {});
    const host = new Host(proc, socket, data);
    const deadline = Date.now() + (options.timeout ?? DEFAULT_START_TIMEOUT);
    try {
      while (!(await canConnect(socket))) {
        if (host.#exit) throw new Error(`Host.start: diagrelay serve exited before listening${host.#tail()}`);
        if (Date.now() > deadline) throw new Error(`Host.start: ${socket} not listening in time${host.#tail()}`);
        await sleep(20);
      }
      host.capability = await host.#peer.call("capabilities.probe");
    } catch (err) {
      proc.kill("SIGKILL");
      await host.#exited;
      throw err;
    }
    return host;
  }

  /** call sends any host method; the typed methods below are built on it. */
  call(method, params = {}) {
    return this.#peer.call(method, params);
  }

  /**
   * open opens (or reopens) a runtime: {path, token, generation}.
   * @param {string} threadPath
   * @param {{parent?: string, owner?: string, bind?: boolean}} [options]
   */
  open(threadPath, { parent, owner, bind } = {}) {
    /** @type {{path: string, parent?: string, owner?: string, bind?: boolean}} */
    const params = { path: threadPath };
    if (parent !== undefined) params.parent = parent;
    if (owner !== undefined) params.owner = owner;
    if (bind !== undefined) params.bind = bind;
    return this.call("runtime.open", params);
  }

  async close(threadPath) {
    await this.call("runtime.close", { path: threadPath });
  }

  status(threadPath) {
    return this.call("thread.status", { path: threadPath });
  }

  async threads() {
    return (await this.call("thread.list", {})).threads;
  }

  async readMailbox(recipient, limit) {
    const params = { recipient };
    if (limit !== undefined) params.limit = limit;
    return (await this.call("mailbox.read", params)).messages;
  }

  async ack(recipient, ids) {
    return (await this.call("mailbox.ack", { recipient, ids })).acked;
  }

  async subscribe() {
    await this.call("events.subscribe", {});
  }

  /**
   * spawnToken asks for a spawn token for threads strictly below
   * threadPath: {path, token}. Only this process and its descendants can
   * open threads with it (spawn.open, docs/protocol.md "Spawn tokens").
   */
  spawnToken(threadPath) {
    return this.call("spawn.token", { path: threadPath });
  }

  /** childEnv is the environment a child needs to reach this service. */
  childEnv(token) {
    return { DIAGRELAY_SOCKET: this.socket, DIAGRELAY_TOKEN: token };
  }

  /** The exit status once the service exited, else null. */
  get exitStatus() {
    return this.#exit ? { ...this.#exit } : null;
  }

  /**
   * stop sends SIGTERM and resolves after the process exited (the service
   * finishes requests in flight and closes its mailbox first). After
   * options.timeout ms (default 10 s) it sends SIGKILL.
   */
  async stop({ timeout = DEFAULT_STOP_TIMEOUT } = {}) {
    if (this.#exit) return;
    this.#proc.kill("SIGTERM");
    let timer;
    const killed = new Promise((resolve) => {
      timer = setTimeout(() => {
        this.#proc.kill("SIGKILL");
        resolve(undefined);
      }, timeout);
    });
    await Promise.race([this.#exited, killed]);
    clearTimeout(timer);
    await this.#exited;
  }
}
