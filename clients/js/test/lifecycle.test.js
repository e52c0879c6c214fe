// The Bridge's lifecycle against a real serve (docs/pi.md): close is
// bounded even when serve is stalled (SIGSTOP), destroy ends at once, the
// probe is not answered once closing starts, an idle bridge never holds the
// process, connect and hello are bounded, and {optional: true} means null.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { bridgeChildBus, findBinary } from "../index.js";
import { builtBinary } from "../lib/bin.js";
import { createBus, report, shortDir, startHost } from "./helpers.js";

const exec = promisify(execFile);
const T = { timeout: 30_000 };
const indexURL = new URL("../index.js", import.meta.url).href;

async function stalledBridge(t) {
  const host = await startHost(t);
  const rt = await host.open("/root/stall");
  const events = createBus();
  const bridge = await bridgeChildBus(events, { socket: host.socket, token: rt.token });
  process.kill(host.pid, "SIGSTOP");
  // Before startHost's stop: a stopped serve would wait for its SIGKILL.
  const resume = () => process.kill(host.pid, "SIGCONT");
  return { host, bridge, pi: { events }, resume };
}

test("close is bounded when serve is stalled; what is unanswered is counted", T, async (t) => {
  const { bridge, pi, resume } = await stalledBridge(t);
  assert.equal(report(pi, "warning", "sent to a stalled serve", "lint"), true);
  const started = Date.now();
  const closing = bridge.close({ timeout: 300 });
  // From the moment closing starts the probe is not answered.
  assert.equal(report(pi, "info", "after close started", "lint"), false);
  await closing;
  const took = Date.now() - started;
  assert.ok(took >= 250 && took < 2000, `close took ${took} ms`);
  assert.equal(bridge.unanswered, 1);
  assert.equal(bridge.connected, false);
  assert.equal(await bridge.close(), undefined, "close again resolves");
  resume();
});

test("close's default bound is 2 s", T, async (t) => {
  const { bridge, pi, resume } = await stalledBridge(t);
  report(pi, "warning", "sent to a stalled serve", "lint");
  const started = Date.now();
  await bridge.close();
  resume();
  const took = Date.now() - started;
  assert.ok(took >= 1900 && took < 4000, `close took ${took} ms`);
});

test("destroy ends at once", T, async (t) => {
  const { bridge, pi, resume } = await stalledBridge(t);
  report(pi, "warning", "one", "lint");
  report(pi, "warning", "two", "lint");
  const started = Date.now();
  bridge.destroy();
  assert.ok(Date.now() - started < 100);
  assert.equal(bridge.unanswered, 2);
  assert.equal(report(pi, "info", "after destroy", "lint"), false);
  await bridge.close(); // resolves at once after a destroy
  resume();
});

test("an idle bridge never holds the process; a closed one neither", T, async (t) => {
  const host = await startHost(t);
  for (const closeIt of [false, true]) {
    const rt = await host.open(`/root/idle${closeIt ? "c" : ""}`);
    const script = `
      import { bridgeChildBus } from ${JSON.stringify(indexURL)};
      const handlers = new Map();
      const events = { on(t, f) { handlers.set(t, f); return () => handlers.delete(t); }, emit(t, d) { handlers.get(t)?.(d); } };
      const bridge = await bridgeChildBus(events);
      events.emit("pi-subagent-manager:diagnostic", { level: "info", message: "idle test", source: "t" });
      await bridge.flush();
      ${closeIt ? "await bridge.close();" : ""}
      console.log("done");`;
    const started = Date.now();
    const r = await exec(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, ...host.childEnv(rt.token) }, timeout: 10_000 });
    assert.equal(r.stdout, "done\n");
    assert.ok(Date.now() - started < 8000);
  }
  assert.equal((await host.readMailbox("/root")).length, 2);
});

test("optional: null where the session is not hosted; connect and hello bounded by 2 s", T, async (t) => {
  const events = createBus();
  const dir = shortDir(t);
  const env = { ...process.env };
  delete process.env.DIAGRELAY_SOCKET;
  delete process.env.DIAGRELAY_TOKEN;
  t.after(() => Object.assign(process.env, env));
  assert.equal(await bridgeChildBus(events, { optional: true }), null, "no variables");
  assert.equal(await bridgeChildBus(events, { optional: true, socket: path.join(dir, "gone"), token: "x" }), null, "no socket");
  const host = await startHost(t);
  assert.equal(await bridgeChildBus(events, { optional: true, socket: host.socket, token: "not-a-token" }), null, "unknown token");
  // Something that accepts and never answers: the default bound.
  const silent = net.createServer(() => {});
  const sock = path.join(dir, "silent");
  await new Promise((r) => silent.listen(sock, r));
  t.after(() => silent.close());
  const started = Date.now();
  assert.equal(await bridgeChildBus(events, { optional: true, socket: sock, token: "t" }), null, "stalled");
  const took = Date.now() - started;
  assert.ok(took >= 1900 && took < 4000, `hello gave up after ${took} ms`);
  await assert.rejects(bridgeChildBus(events, { socket: sock, token: "t", timeout: 200 }), { code: "ETIMEDOUT" });
  assert.equal(events.count("pi-subagent-manager:diagnostic:probe"), 0, "nothing installed");
});

test("a missing binary names what was tried and what to install", () => {
  assert.equal(findBinary({ bin: "/x/diagrelay", env: { DIAGRELAY_BIN: "/y" } }), "/x/diagrelay");
  assert.equal(findBinary({ env: { DIAGRELAY_BIN: "/y" } }), "/y");
  const built = builtBinary(`${process.platform}-${process.arch}`);
  if (built) {
    // This clone has run scripts/build-platforms.sh: that binary is found.
    assert.equal(findBinary({ env: { PATH: "" } }), built);
    return;
  }
  assert.throws(() => findBinary({ env: { PATH: "" } }), (err) => {
    assert.equal(err.code, "ERR_DIAGRELAY_NO_BINARY");
    for (const part of ["bin option", "DIAGRELAY_BIN", "platform package", "PATH", "@diagrelay/"]) assert.ok(err.message.includes(part), err.message);
    return true;
  });
});
