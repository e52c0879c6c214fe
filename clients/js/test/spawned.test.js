// Children with no glue (docs/pi.md): a process started below the host by
// a program with no diagrelay code, with DIAGRELAY_PARENT in its
// environment and the package's pi extension loaded, opens its own thread
// with the spawn token and reports to the parent; what the service refuses
// leaves it unhosted, silently. Against a real serve.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { shortDir, startHost } from "./helpers.js";
import { announceParent, childName, parseParent, spawnedParent, threadName, withdrawParent } from "../lib/pi-spawn.js";

const PARENT_EXTENSION = fileURLToPath(new URL("../pi/parent.js", import.meta.url));

// The child: a pi-shaped API around the package's extension entry (what pi
// loads from `pi install`), then what an extension written for the original
// does on its bus, then pi's shutdown. It prints whether it was hosted.
const CHILD = `
import parent from ${JSON.stringify(PARENT_EXTENSION)};
const topics = new Map();
const events = {
  on(topic, fn) { if (!topics.has(topic)) topics.set(topic, new Set()); const e = (d) => fn(d); topics.get(topic).add(e); return () => topics.get(topic).delete(e); },
  emit(topic, data) { for (const fn of topics.get(topic) ?? []) fn(data); },
};
const handlers = new Map();
let stale = false;
const pi = {
  events,
  on(name, fn) { if (!handlers.has(name)) handlers.set(name, []); handlers.get(name).push(fn); },
  registerCommand() {},
  getFlag() { if (stale) throw new Error("stale extension API"); },
};
await parent(pi);
let cap = null;
events.emit("pi-subagent-manager:diagnostic:probe", { respond(c) { cap = c; } });
if (cap) events.emit("pi-subagent-manager:diagnostic", { level: "warning", source: "lint", message: process.env.CHILD_MESSAGE });
for (const fn of handlers.get("session_shutdown") ?? []) await fn({}, {});
stale = true;
process.stdout.write(JSON.stringify({ hosted: Boolean(cap), pid: process.pid }) + "\\n");
`;

/** runChild starts the child through /bin/sh (a program with no diagrelay code) and resolves with what it printed. */
function runChild(dir, args, env) {
  const script = path.join(dir, "child.mjs");
  fs.writeFileSync(script, CHILD);
  return new Promise((resolve, reject) => {
    const p = spawn("/bin/sh", ["-c", 'exec "$0" "$@"', process.execPath, script, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "", err = "";
    p.stdout.on("data", (c) => (out += c));
    p.stderr.on("data", (c) => (err += c));
    p.on("error", reject);
    p.on("exit", (code) => {
      try {
        resolve({ code, stderr: err, ...JSON.parse(out) });
      } catch {
        reject(new Error(`child printed ${JSON.stringify(out)}, stderr ${JSON.stringify(err)}, exit ${code}`));
      }
    });
  });
}

async function waitFor(what, fn, ms = 10_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    assert.ok(Date.now() < end, `${what} within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("a child started with only DIAGRELAY_PARENT reports to the parent in a thread of its own", async (t) => {
  const host = await startHost(t);
  const dir = shortDir(t);
  await announceParent(host);
  t.after(() => withdrawParent(host));
  const parent = parseParent(process.env.DIAGRELAY_PARENT);
  assert.equal(parent?.socket, host.socket);
  assert.equal(parent?.pid, process.pid);
  assert.equal(spawnedParent(), null, "the parent's own process is not a spawned child");

  const first = await runChild(dir, ["--name", "scout"], { CHILD_MESSAGE: "lint config not found" });
  assert.deepEqual([first.code, first.hosted, first.stderr], [0, true, ""]);
  const msgs = await waitFor("the first report in /root's mailbox", async () => {
    const m = await host.readMailbox("/root");
    return m.length === 1 ? m : null;
  });
  assert.equal(msgs[0].from, "/root/scout");
  assert.equal(msgs[0].message, "lint config not found");
  const st = await waitFor("/root/scout closed after its process exited", async () => {
    const s = /** @type {any} */ (await host.status("/root/scout"));
    return s.open ? null : s;
  });
  assert.equal(st.peer?.pid, first.pid, "the thread is bound to the process that opened it");
  assert.ok(st.exited);

  // A name taken by an open thread (here the host's own): name-<pid>.
  await host.open("/root/taken");
  const clash = await runChild(dir, ["--name", "taken"], { CHILD_MESSAGE: "from the second taken" });
  assert.equal(clash.hosted, true);
  await waitFor("the clashing child's report", async () => (await host.readMailbox("/root")).some((m) => m.from === `/root/taken-${clash.pid}`));

  // Unnamed: pi-<pid>.
  const unnamed = await runChild(dir, [], { CHILD_MESSAGE: "from an unnamed child" });
  assert.equal(unnamed.hosted, true);
  await waitFor("the unnamed child's report", async () => (await host.readMailbox("/root")).some((m) => m.from === `/root/pi-${unnamed.pid}`));
});

test("a refused or unreachable parent leaves the child unhosted, silently", async (t) => {
  const host = await startHost(t);
  const dir = shortDir(t);
  const { token } = await host.spawnToken("/root");
  const cases = [
    ["a token the service does not know", { socket: host.socket, token: "0".repeat(64), path: "/root", pid: 1 }],
    ["a socket nobody listens on", { socket: path.join(dir, "none"), token, path: "/root", pid: 1 }],
    ["not JSON", "socket=" + host.socket],
  ];
  for (const [what, value] of cases) {
    const r = await runChild(dir, [], { DIAGRELAY_PARENT: typeof value === "string" ? value : JSON.stringify(value), CHILD_MESSAGE: what });
    assert.deepEqual([r.code, r.hosted, r.stderr], [0, false, ""], what);
  }
  // DIAGRELAY_TOKEN takes precedence: a hosted child is not a spawned one.
  assert.equal(spawnedParent({ DIAGRELAY_PARENT: JSON.stringify({ socket: host.socket, token, path: "/root", pid: 1 }), DIAGRELAY_TOKEN: "x" }), null);
  assert.deepEqual(await host.readMailbox("/root"), []);
});

test("childName: the session name, else the agent of pi's subagent example, else pi-<pid>", () => {
  assert.equal(childName(["node", "pi", "--name", "Refactor auth module", "-p"]), "Refactor-auth-module");
  assert.equal(childName(["node", "pi", "-n", "x"]), "x");
  assert.equal(childName(["node", "pi", "--append-system-prompt", "/tmp/pi-subagent-ab12/prompt-scout.md", "Task: go"]), "scout");
  assert.equal(childName(["node", "pi", "--mode", "json", "-p"]), `pi-${process.pid}`);
  assert.equal(threadName("../é vil/..\u0000"), "vil");
  assert.equal(threadName("---"), "");
  assert.equal(threadName("a".repeat(80)).length, 64);
});
