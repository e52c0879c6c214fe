// The pi support without pi: its rules that do not need the agent (the real
// pi drives the rest in pi-test/). A claim on the registry stands in for the
// parent extension's session_start; the service is the real serve.

import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { beforePrompt, MESSAGE_TYPE } from "../lib/pi-deliver.js";
import { hostFor, stopRootHost } from "../lib/pi-host.js";
import { registry } from "../lib/pi-registry.js";
import { diagrelayBin, shortDir } from "./helpers.js";

const here = path.dirname(new URL(import.meta.url).pathname);
const pkg = path.join(here, "..");

test("nothing of the package imports either pi package at run time", () => {
  const files = ["index.js", ...fs.readdirSync(path.join(pkg, "lib")).map((f) => `lib/${f}`), ...fs.readdirSync(path.join(pkg, "pi")).map((f) => `pi/${f}`)];
  for (const f of files.filter((f) => f.endsWith(".js"))) {
    const src = fs.readFileSync(path.join(pkg, f), "utf8");
    assert.doesNotMatch(src, /(?:from|import\()\s*["']@(?:earendil-works|mariozechner)\//, `${f} imports a pi package`);
  }
  const manifest = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8"));
  for (const name of ["@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent"]) {
    assert.equal(manifest.peerDependencies?.[name], "*");
    assert.equal(manifest.peerDependenciesMeta?.[name]?.optional, true);
    assert.equal(manifest.dependencies?.[name], undefined);
  }
});

const ours = (text) => ({ role: "custom", customType: MESSAGE_TYPE, content: text });
const user = (text) => ({ role: "user", content: [{ type: "text", text }] });

test("beforePrompt moves the diagnostics pi put after a prompt to before it, and nothing else", () => {
  const other = { role: "custom", customType: "theirs", content: "x" };
  const a = { role: "assistant", content: [] };
  const r = beforePrompt({ messages: [user("p1"), a, user("p2"), ours("d1"), other, ours("d2"), a] });
  assert.deepEqual(r?.messages, [user("p1"), a, ours("d1"), ours("d2"), user("p2"), other, a]);
  // Already in order, or none of ours: unchanged (undefined keeps pi's request as it is).
  assert.equal(beforePrompt({ messages: [ours("d1"), user("p"), a] }), undefined);
  assert.equal(beforePrompt({ messages: [user("p"), other] }), undefined);
  assert.equal(beforePrompt({}), undefined);
  assert.equal(beforePrompt(/** @type {any} */ (null)), undefined);
});

test("no claim, no Host: open rejects as not hosted and run runs the child unhosted", async () => {
  const reg = registry();
  assert.equal(reg.parent, null);
  await assert.rejects(hostFor().open("/root/x"), { code: "ERR_DIAGRELAY_NOT_HOSTED" });
  const r = await hostFor().run("/root/x", ["-e", "console.log(process.env.DIAGRELAY_TOKEN ?? 'none')"], { command: { command: process.execPath, args: [] }, env: { DIAGRELAY_TOKEN: "stale" } });
  assert.deepEqual([r.hosted, r.code, r.stdout, r.status], [false, 0, "none\n", null]);
  assert.match(r.error ?? "", /not hosted/);
  assert.equal(reg.host, null);
});

test("a dead serve: status is stale, close resolves, one warning, and the next open starts a new serve", async (t) => {
  process.env.DIAGRELAY_BIN = diagrelayBin();
  const data = shortDir(t);
  /** @type {Array<[string, string]>} */
  const shown = [];
  const given = [];
  const pi = { sendMessage: (m) => given.push(m) };
  const reg = registry();
  reg.parent = { claim: {}, pi, ui: { notify: (m, type) => shown.push([type, m]) }, data, temporary: false };
  t.after(async () => {
    reg.parent = null;
    await stopRootHost();
  });
  const child = await hostFor(pi).open("/root/a");
  const first = await child.status();
  assert.equal(first.path, "/root/a");
  assert.equal(first.stale, undefined);
  const host = await reg.host;
  assert.ok(host);
  const exited = new Promise((resolve) => host.on("exit", resolve));
  process.kill(host.pid, "SIGKILL");
  await exited;
  await new Promise((resolve) => setImmediate(resolve));
  const st = await child.status();
  assert.equal(st.stale, true);
  assert.equal(st.path, "/root/a");
  await child.close(); // resolves
  assert.equal(await child.attach({ on: () => () => {} }), null);
  const warnings = shown.filter(([type, m]) => type === "warning" && m.startsWith("diagrelay: the service exited"));
  assert.equal(warnings.length, 1, JSON.stringify(shown));
  // A new serve on the same data directory: the next child reports.
  const next = await hostFor(pi).open("/root/b");
  const again = await reg.host;
  assert.ok(again && again.pid !== host.pid);
  assert.equal((await next.status()).stale, undefined);
  await next.close();
  // The run recipe after the death, through the new serve: the last status comes back.
  const r = await hostFor(pi).run("/root/c", ["-e", "process.exit(3)"], { command: { command: process.execPath, args: [] } });
  assert.deepEqual([r.hosted, r.code, r.status?.path], [true, 3, "/root/c"]);
});

test("every name the modules export is declared in their .d.ts, and nothing else is", async () => {
  for (const [mod, dts] of [["../index.js", "index.d.ts"], ["../lib/pi.js", "pi.d.ts"]]) {
    const exported = Object.keys(await import(mod)).sort();
    const src = fs.readFileSync(path.join(pkg, dts), "utf8");
    const declared = [...src.matchAll(/^export declare (?:const|function|class) (\w+)/gm)].map((m) => m[1]);
    assert.deepEqual(exported, [...new Set(declared)].sort(), `${mod} and ${dts}`);
  }
});

test("run: stdin ignored, stdout's lines to onLine as they come, an abort kills the child", async () => {
  const node = { command: process.execPath, args: [] };
  const lines = [];
  // The child reads its stdin to the end (ignored: at once) and prints two lines and a partial one.
  const script = "let n=0;process.stdin.on('data',(d)=>n+=d.length).on('end',()=>{process.stdout.write('a\\r\\nb\\n');process.stdout.write('stdin '+n);console.error('err')})";
  const r = await hostFor().run("/root/x", ["-e", script], { command: node, onLine: (l) => lines.push(l) });
  assert.deepEqual([r.code, r.stdout, r.stderr, lines], [0, "a\r\nb\nstdin 0", "err\n", ["a", "b", "stdin 0"]]);
  // onLine throwing stays the caller's: the output is still captured.
  const t = await hostFor().run("/root/x", ["-e", "console.log('x')"], { command: node, onLine: () => { throw new Error("boom"); } });
  assert.deepEqual([t.code, t.stdout], [0, "x\n"]);
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 200);
  const started = Date.now();
  const k = await hostFor().run("/root/x", ["-e", "setInterval(() => {}, 1000)"], { command: node, signal: ac.signal });
  assert.equal(k.signal, "SIGTERM");
  assert.ok(Date.now() - started < 5000);
  const missing = await hostFor().run("/root/x", [], { command: { command: "/nonexistent/pi", args: [] } });
  assert.equal(missing.code, null);
  assert.match(missing.error ?? "", /cannot run \/nonexistent\/pi/);
});
