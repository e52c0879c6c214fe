// Spawn tokens in pi (docs/pi.md, "Children with no glue"; the service's
// side: docs/protocol.md, "Spawn tokens"). The parent pi puts
// DIAGRELAY_PARENT (its serve's socket, a spawn token for threads below
// /root, and its own pid) into its own process.env, so every process it
// starts, through any package, inherits it. A pi that finds it, and no
// DIAGRELAY_TOKEN, opens a thread of its own below the parent's path with
// it (pi/spawned.js). Internal to the package.

import net from "node:net";
import path from "node:path";
import { Peer } from "./rpc.js";
import { closeSocket } from "./child.js";

/** The variable a parent pi puts in its own environment. */
export const PARENT_ENV = "DIAGRELAY_PARENT";

/** The path a parent pi's spawn token opens below. */
export const PARENT_PATH = "/root";

/** Connecting and opening together, at most (ms): a stalled serve cannot hold a child's start-up. */
export const SPAWN_TIMEOUT = 2000;

const CODE_FORBIDDEN = -32002;

/**
 * The parent a process was started below: DIAGRELAY_PARENT's value.
 * @typedef {{socket: string, token: string, path: string, pid: number}} SpawnParent
 */

/**
 * announceParent asks host for a spawn token for threads below /root and
 * puts DIAGRELAY_PARENT into this process's environment. A failure leaves
 * the environment without it: children then start unhosted.
 * @param {{socket: string, spawnToken: (path: string) => Promise<{path: string, token: string}>}} host
 */
export async function announceParent(host) {
  try {
    const { token } = await host.spawnToken(PARENT_PATH);
    process.env[PARENT_ENV] = JSON.stringify({ socket: host.socket, token, path: PARENT_PATH, pid: process.pid });
  } catch {
    withdrawParent(host);
  }
}

/**
 * withdrawParent removes DIAGRELAY_PARENT from this process's environment
 * if it names host's socket (its serve stopped or died): no child started
 * from now on tries a dead socket.
 * @param {{socket: string}} host
 */
export function withdrawParent(host) {
  const p = parseParent(process.env[PARENT_ENV]);
  if (p && p.pid === process.pid && p.socket === host.socket) delete process.env[PARENT_ENV];
}

/**
 * parseParent reads DIAGRELAY_PARENT's value; null when it is absent or
 * not the shape a parent pi writes.
 * @param {string | undefined} value
 * @returns {SpawnParent | null}
 */
export function parseParent(value) {
  if (!value) return null;
  let p;
  try {
    p = JSON.parse(value);
  } catch {
    return null;
  }
  if (typeof p?.socket !== "string" || !p.socket || typeof p.token !== "string" || !p.token) return null;
  if (typeof p.path !== "string" || !p.path.startsWith("/") || !Number.isInteger(p.pid)) return null;
  return { socket: p.socket, token: p.token, path: p.path, pid: p.pid };
}

/**
 * spawnedParent is the parent this process was started below, or null: a
 * process with DIAGRELAY_TOKEN is a hosted child (hostFor's open set it,
 * and takes precedence), and the parent's own process (a /reload, an
 * in-process child) finds its own pid there.
 */
export function spawnedParent(env = process.env) {
  if (env.DIAGRELAY_TOKEN) return null;
  const p = parseParent(env[PARENT_ENV]);
  return p && p.pid !== process.pid ? p : null;
}

/**
 * threadName makes a path segment of a name: letters, digits, _ and -,
 * starting with a letter or digit, at most 64; "" when nothing is left.
 * @param {string | undefined} name
 */
export function threadName(name) {
  return String(name ?? "")
    .replace(/[^A-Za-z0-9_-]+/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, 64)
    .replace(/-+$/, "");
}

/**
 * childName is what a pi child knows of its name at load, from its own
 * command line: its session name (`--name`/`-n`), else the agent that pi's
 * subagent example names in its system prompt file
 * (`--append-system-prompt …/prompt-<agent>.md`), else `pi-<pid>`.
 * @param {string[]} [argv]
 */
export function childName(argv = process.argv) {
  for (let i = 0; i < argv.length - 1; i++) {
    if (argv[i] === "--name" || argv[i] === "-n") {
      const n = threadName(argv[i + 1]);
      if (n) return n;
    }
  }
  for (let i = 0; i < argv.length - 1; i++) {
    if (argv[i] !== "--append-system-prompt") continue;
    const m = /^prompt-(.+)\.md$/.exec(path.basename(argv[i + 1]));
    const n = threadName(m?.[1]);
    if (n) return n;
  }
  return `pi-${process.pid}`;
}

/**
 * openSpawned opens a thread below parent.path with the spawn token and
 * returns {path, token, generation}: name, else `name-<pid>`, then
 * `name-<pid>-2`… when a thread of that name is open. It rejects when the
 * service refuses (an RPCError with the JSON-RPC code), is not there, or
 * does not answer within options.timeout ms (default 2000).
 * @param {SpawnParent} parent
 * @param {string} name a path segment (threadName)
 * @param {{timeout?: number}} [options]
 * @returns {Promise<{path: string, token: string, generation: number}>}
 */
export async function openSpawned(parent, name, { timeout = SPAWN_TIMEOUT } = {}) {
  const sock = net.createConnection(parent.socket);
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  const expired = new Promise((_, reject) => {
    timer = setTimeout(() => {
      sock.destroy();
      reject(Object.assign(new Error(`diagrelay: no answer from ${parent.socket} within ${timeout} ms`), { code: "ETIMEDOUT" }));
    }, timeout);
  });
  try {
    await Promise.race([
      new Promise((resolve, reject) => {
        sock.once("connect", resolve);
        sock.once("error", reject);
      }),
      expired,
    ]);
    const peer = new Peer(sock, sock, {});
    const names = [name, `${name}-${process.pid}`.slice(0, 64)];
    for (let n = 2; n <= 9; n++) names.push(`${name.slice(0, 50)}-${process.pid}-${n}`);
    /** @type {any} */
    let last;
    for (const segment of names) {
      try {
        return await Promise.race([peer.call("spawn.open", { token: parent.token, path: `${parent.path}/${segment}` }), expired]);
      } catch (err) {
        last = err;
        // Only a name in use is worth another try.
        if (/** @type {any} */ (err)?.code !== CODE_FORBIDDEN || !/is open/.test(String(/** @type {any} */ (err)?.message))) throw err;
      }
    }
    throw last;
  } finally {
    clearTimeout(timer);
    await closeSocket(sock, 200);
  }
}
