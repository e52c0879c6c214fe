// The pieces the real-pi tests share: a pi agent directory whose model is
// the loopback fake (fake-model.js), `pi install` of the package, a parent
// `pi --mode rpc` with its JSON lines read, and the serve it started.

import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export const here = path.dirname(fileURLToPath(import.meta.url));
/**
 * The package whose pi the tests drive: this one (pi 0.73.1) or, with
 * DIAGRELAY_PI_ROOT, another test-only package (../pi-test-1.6, pi 1.6.0).
 */
export const PI_ROOT = process.env.DIAGRELAY_PI_ROOT ? path.resolve(process.env.DIAGRELAY_PI_ROOT) : here;
// Absolute, for the stand-in extension in pi processes with other cwds.
if (process.env.DIAGRELAY_PI_ROOT) process.env.DIAGRELAY_PI_ROOT = PI_ROOT;
export const PI = path.join(PI_ROOT, "node_modules", ".bin", "pi");
/** The pi package under test: its name, version and directory. */
export const PI_PACKAGE = (() => {
  for (const name of ["@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent"]) {
    const dir = path.join(PI_ROOT, "node_modules", ...name.split("/"));
    if (fs.existsSync(path.join(dir, "package.json"))) return { name, dir, version: JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version };
  }
  throw new Error(`no pi package under ${PI_ROOT}/node_modules: run npm ci there`);
})();
export const PACKAGE = path.resolve(here, "..");
export const SUBAGENT = path.join(here, "extensions", "subagent.js");
export const SEED = path.join(here, "extensions", "seed-child.js");
export const exec = promisify(execFile);

/** The environment of an ordinary session: no diagrelay variables, pi offline; extra's nulls delete. */
export function baseEnv(agentDir, extra = {}) {
  const env = { ...process.env, PI_CODING_AGENT_DIR: agentDir, PI_OFFLINE: "1" };
  delete env.DIAGRELAY_SOCKET;
  delete env.DIAGRELAY_TOKEN;
  for (const [k, v] of Object.entries(extra)) {
    if (v === null) delete env[k];
    else env[k] = v;
  }
  return env;
}

/**
 * agentDir makes a pi agent directory whose only model is the fake at
 * modelURL, and installs the package there with the real `pi install`.
 */
export async function makeAgentDir(t, modelURL) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drpi-agent-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, "models.json"), JSON.stringify({
    providers: {
      fake: {
        baseUrl: modelURL,
        api: "openai-completions",
        apiKey: "fake-key",
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [{ id: "fake-model", reasoning: false, input: ["text"], contextWindow: 128000, maxTokens: 4096, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }],
      },
    },
  }));
  fs.writeFileSync(path.join(dir, "settings.json"), JSON.stringify({ defaultProvider: "fake", defaultModel: "fake-model" }));
  await exec(PI, ["install", PACKAGE], { env: baseEnv(dir), cwd: dir, timeout: 60_000 });
  return dir;
}

/** A pi --mode rpc process: send(cmd), frames, waitFrame(pred, ms). */
export function startRPC(t, agentDir, args, extraEnv = {}, { cwd: givenCwd } = {}) {
  const cwd = givenCwd ?? fs.mkdtempSync(path.join(os.tmpdir(), "drpi-cwd-"));
  const proc = spawn(PI, ["--mode", "rpc", ...args], { cwd, env: baseEnv(agentDir, extraEnv), stdio: ["pipe", "pipe", "pipe"] });
  const frames = [];
  let buf = "", stderr = "";
  const waiters = new Set();
  proc.stdout.setEncoding("utf8");
  proc.stdout.on("data", (c) => {
    buf += c;
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, "");
      buf = buf.slice(nl + 1);
      if (!line.trim()) continue;
      let f;
      try {
        f = JSON.parse(line);
      } catch {
        f = { unparsed: line };
      }
      frames.push(f);
      for (const w of [...waiters]) w();
    }
  });
  proc.stderr.on("data", (c) => (stderr += c));
  const exited = new Promise((resolve) => proc.on("exit", (code, signal) => resolve({ code, signal })));
  t.after(async () => {
    proc.stdin.end();
    const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
    if (!givenCwd) fs.rmSync(cwd, { recursive: true, force: true });
  });
  let next = 0;
  return {
    proc,
    frames,
    exited,
    stderr: () => stderr,
    /** send writes one command and resolves with its response frame. */
    async send(cmd, ms = 30_000) {
      const id = `t${++next}`;
      proc.stdin.write(JSON.stringify({ id, ...cmd }) + "\n");
      return this.waitFrame((f) => f.type === "response" && f.id === id, ms, `response to ${JSON.stringify(cmd)}`);
    },
    /** waitFrame resolves with the first frame (from the start) that pred accepts. */
    waitFrame(pred, ms = 30_000, what = "frame") {
      return new Promise((resolve, reject) => {
        const check = () => {
          const f = frames.find(pred);
          if (f) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(f);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${what}; stderr: ${stderr.slice(-2000)}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
  };
}

/** notifies are the notify requests pi's RPC stdout carried so far. */
export function notifies(rpc) {
  return rpc.frames.filter((f) => f.type === "extension_ui_request" && f.method === "notify");
}

/** standin resolves with the stand-in's JSON result of kind for path. */
export async function standin(rpc, kind, path, ms = 60_000) {
  const f = await rpc.waitFrame((f) => f.method === "notify" && typeof f.message === "string" && f.message.startsWith(`${kind} `) && JSON.parse(f.message.slice(kind.length + 1))?.path === path, ms, `${kind} ${path}`);
  return JSON.parse(f.message.slice(kind.length + 1));
}

/** servePid finds the diagrelay serve process whose parent is pid. */
export function servePid(pid) {
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, "utf8");
      if (ppid === pid && cmd.includes("serve")) return Number(d);
    } catch {
      // gone
    }
  }
  return null;
}

/**
 * unacknowledged asks the running serve, as its host (DIR/host.token), how
 * many messages for recipient are not acknowledged yet.
 */
export function unacknowledged(socket, dataDir, recipient) {
  const token = fs.readFileSync(path.join(dataDir, "host.token"), "utf8");
  return new Promise((resolve, reject) => {
    const c = net.createConnection(socket);
    let buf = "";
    c.setEncoding("utf8");
    c.on("error", reject);
    c.on("connect", () => {
      c.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "session.hello", params: { token } }) + "\n");
      c.write(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "mailbox.read", params: { recipient } }) + "\n");
    });
    c.on("data", (d) => {
      buf += d;
      for (const line of buf.split("\n").slice(0, -1)) {
        const m = JSON.parse(line);
        if (m.id === 1 && m.error) reject(new Error(m.error.message));
        if (m.id === 2) {
          c.destroy();
          if (m.error) reject(new Error(m.error.message));
          else resolve(m.result.messages.length);
        }
      }
    });
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
