// PiHost.run: a child pi under a thread of its own, as a subagent package
// runs one: stdin ignored, stdout and stderr captured, never the parent's
// terminal or RPC stream. Internal to the package; docs/pi.md ("run").

import fs from "node:fs";
import path from "node:path";
import { spawn } from "node:child_process";

/** Characters (UTF-16 units) kept of each of the child's stdout and stderr; the rest is counted, not kept. */
export const MAX_CAPTURE = 16 << 20;

/** After an abort, SIGTERM; after this many ms, SIGKILL (as pi's subagent example does). */
export const KILL_AFTER = 5000;

/**
 * piCommand is how to start another pi like this one: the running Node with
 * pi's own script (process.argv[1]), as pi's subagent example does; a pi
 * built as one executable is its own command; else `pi` on PATH.
 * @returns {{command: string, args: string[]}}
 */
export function piCommand() {
  const script = process.argv[1];
  if (script && !script.startsWith("/$bunfs/") && fs.existsSync(script)) return { command: process.execPath, args: [script] };
  if (!/^(node|bun)(\.exe)?$/i.test(path.basename(process.execPath))) return { command: process.execPath, args: [] };
  return { command: "pi", args: [] };
}

/**
 * @typedef {{
 *   cwd?: string, env?: Record<string, string | undefined>, signal?: AbortSignal,
 *   onLine?: (line: string) => void, parent?: string, owner?: string,
 *   command?: {command: string, args: string[]},
 * }} RunOptions
 */

/**
 * @typedef {{
 *   path: string, code: number | null, signal: NodeJS.Signals | null,
 *   stdout: string, stderr: string, truncated: number,
 *   status: any, hosted: boolean, error?: string,
 * }} RunResult
 */

/**
 * run opens threadPath with open (PiHost.open), runs the child pi with
 * child.args first and child.env added, waits for it to exit, then reads
 * the thread's last status and closes the thread. It never rejects: when no
 * thread can be opened the child runs unhosted (hosted: false, error says
 * why), and a child that cannot start resolves with code null and error.
 * @param {(p: string, o: {parent?: string, owner?: string}) => Promise<import("./pi-host.js").PiChild>} open
 * @param {string} threadPath
 * @param {string[]} args
 * @param {RunOptions} [options]
 * @returns {Promise<RunResult>}
 */
export async function run(open, threadPath, args, options = {}) {
  const { cwd, env, signal, onLine, parent, owner, command = piCommand() } = options;
  /** @type {import("./pi-host.js").PiChild | null} */
  let child = null;
  /** @type {string | undefined} */
  let error;
  try {
    /** @type {{parent?: string, owner?: string}} */
    const o = {};
    if (parent !== undefined) o.parent = parent;
    if (owner !== undefined) o.owner = owner;
    child = await open(threadPath, o);
  } catch (err) {
    error = `diagrelay: not hosted: ${/** @type {Error} */ (err)?.message ?? err}`;
  }
  /** @type {Record<string, string | undefined>} */
  const childEnv = { ...process.env, ...env };
  if (child) Object.assign(childEnv, child.env);
  else {
    // Never a stale thread's variables: the child runs as a top-level pi would.
    delete childEnv.DIAGRELAY_SOCKET;
    delete childEnv.DIAGRELAY_TOKEN;
  }
  const out = await spawnCaptured(command.command, [...command.args, ...(child?.args ?? []), ...args], { cwd, env: childEnv, signal, onLine });
  const status = child ? await child.status() : null;
  if (child) await child.close();
  /** @type {RunResult} */
  const result = { path: threadPath, ...out, status, hosted: child !== null };
  if (error && !result.error) result.error = error;
  return result;
}

/**
 * spawnCaptured runs command with stdin ignored and both outputs piped,
 * keeping at most MAX_CAPTURE bytes of each, and resolves when it has exited
 * and its pipes are closed.
 * @param {string} command
 * @param {string[]} args
 * @param {{cwd?: string, env: Record<string, string | undefined>, signal?: AbortSignal, onLine?: (line: string) => void}} options
 * @returns {Promise<{code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string, truncated: number, error?: string}>}
 */
function spawnCaptured(command, args, { cwd, env, signal, onLine }) {
  return new Promise((resolve) => {
    let stdout = "", stderr = "", line = "", truncated = 0, settled = false;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let killer;
    /** @type {import("node:child_process").ChildProcess} */
    let proc;
    const keep = (/** @type {string} */ have, /** @type {string} */ chunk) => {
      const room = MAX_CAPTURE - have.length;
      if (chunk.length <= room) return have + chunk;
      truncated += chunk.length - Math.max(0, room);
      return room > 0 ? have + chunk.slice(0, room) : have;
    };
    const lineOut = (/** @type {string} */ l) => {
      if (!onLine) return;
      try {
        onLine(l.replace(/\r$/, ""));
      } catch {
        // the caller's fault stays the caller's: the child's output is still captured
      }
    };
    const abort = () => {
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill("SIGTERM");
      killer = setTimeout(() => proc.kill("SIGKILL"), KILL_AFTER);
      killer.unref();
    };
    const finish = (/** @type {{code: number | null, signal: NodeJS.Signals | null, error?: string}} */ how) => {
      if (settled) return;
      settled = true;
      if (killer) clearTimeout(killer);
      signal?.removeEventListener("abort", abort);
      if (line) lineOut(line);
      resolve({ ...how, stdout, stderr, truncated });
    };
    try {
      proc = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], shell: false });
    } catch (err) {
      finish({ code: null, signal: null, error: `cannot run ${command}: ${/** @type {Error} */ (err).message}` });
      return;
    }
    proc.stdout?.setEncoding("utf8");
    proc.stderr?.setEncoding("utf8");
    proc.stdout?.on("data", (/** @type {string} */ c) => {
      stdout = keep(stdout, c);
      if (!onLine) return;
      const parts = (line + c).split("\n");
      line = parts.pop() ?? "";
      for (const l of parts) lineOut(l);
    });
    proc.stderr?.on("data", (/** @type {string} */ c) => {
      stderr = keep(stderr, c);
    });
    proc.on("error", (err) => finish({ code: null, signal: null, error: `cannot run ${command}: ${err.message}` }));
    proc.on("close", (code, sig) => finish({ code, signal: sig }));
    if (signal?.aborted) abort();
    else signal?.addEventListener("abort", abort, { once: true });
  });
}
