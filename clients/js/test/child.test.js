// connectChild, and how a child (bridged or not) is refused: the promise
// rejects with the JSON-RPC code, or the socket's error, and never hangs.

import assert from "node:assert/strict";
import net from "node:net";
import path from "node:path";
import { test } from "node:test";
import { bridgeChildBus, connectChild, RPCError, PROBE_TOPIC } from "../index.js";
import { createBus, shortDir, startHost } from "./helpers.js";

const T = { timeout: 20_000 };

test("connectChild probes and reports without a bus", T, async (t) => {
  const host = await startHost(t);
  const rt = await host.open("/root/plain");
  const child = await connectChild({ socket: host.socket, token: rt.token + "\r\n" });
  t.after(() => child.close());
  assert.deepEqual(child.session, { role: "child", path: "/root/plain", generation: 1 });
  assert.deepEqual(child.capability, { version: "1.1.0", protocol: 1 });
  assert.deepEqual(await child.probe(), { version: "1.1.0", protocol: 1 });
  assert.deepEqual(await child.probe("v1.1.0"), { version: "1.1.0", protocol: 1 });
  assert.equal(await child.probe("1.2.0"), null, "a host older than the minimum is not compatible");
  await assert.rejects(child.probe("one"), TypeError);

  await child.report("warning", "direct", "cli");
  await child.report("info", "x".repeat(100_000));
  const err = await child.report("fatal", "bad level").catch((e) => e);
  assert.ok(err instanceof RPCError);
  assert.equal(err.code, -32602);
  assert.match(err.message, /level/);
  const st = await host.status("/root/plain");
  assert.deepEqual(st.diagnostics.map((d) => [d.level, d.source, d.message.length]), [["warning", "cli", 6], ["info", "", 1000]]);
  assert.equal(st.dropped.invalid, 1);
  await child.close();
  await assert.rejects(child.report("info", "after close"), { code: "ERR_DIAGRELAY_CLOSED" });
});

test("the environment is the default", T, async (t) => {
  const host = await startHost(t);
  const rt = await host.open("/root/env");
  const saved = { ...process.env };
  Object.assign(process.env, host.childEnv(rt.token));
  t.after(() => {
    delete process.env.DIAGRELAY_SOCKET;
    delete process.env.DIAGRELAY_TOKEN;
    Object.assign(process.env, saved);
  });
  const child = await connectChild();
  assert.equal(child.session.path, "/root/env");
  await child.close();
});

test("refused tokens reject with the JSON-RPC code", T, async (t) => {
  const host = await startHost(t);
  const rt = await host.open("/root/tok");
  const events = createBus();
  const socket = host.socket;
  await assert.rejects(bridgeChildBus(events, { socket, token: "0".repeat(64) }), (e) => e instanceof RPCError && e.code === -32001);
  await assert.rejects(connectChild({ socket, token: "not-a-token" }), { code: -32001 });
  await assert.rejects(connectChild({ socket, token: "  \n" }), { code: "ERR_DIAGRELAY_NOT_HOSTED" });
  await host.open("/root/tok"); // reopen: the first token is revoked
  await assert.rejects(bridgeChildBus(events, { socket, token: rt.token }), { code: -32003 });
  await host.close("/root/tok");
  // The host token makes a host connection, which may not probe as a child.
  const { readFileSync } = await import("node:fs");
  const hostToken = readFileSync(path.join(host.data, "host.token"), "utf8");
  await assert.rejects(bridgeChildBus(events, { socket, token: hostToken }), { code: -32002 });
  assert.equal(events.count(PROBE_TOPIC), 0, "nothing installed by a refused bridge");
});

test("no service, or a silent one: rejects, never hangs", T, async (t) => {
  const dir = shortDir(t);
  const events = createBus();
  await assert.rejects(bridgeChildBus(events, { socket: path.join(dir, "none"), token: "t" }), { code: "ENOENT" });
  // Something that accepts and never answers.
  const silent = net.createServer(() => {});
  const sock = path.join(dir, "silent");
  await new Promise((r) => silent.listen(sock, r));
  t.after(() => silent.close());
  const started = Date.now();
  await assert.rejects(bridgeChildBus(events, { socket: sock, token: "t", timeout: 300 }), { code: "ETIMEDOUT" });
  await assert.rejects(connectChild({ socket: sock, token: "t", timeout: 300 }), { code: "ETIMEDOUT" });
  assert.ok(Date.now() - started < 5000);
  // Something that closes at once.
  const rude = net.createServer((c) => c.destroy());
  const sock2 = path.join(dir, "rude");
  await new Promise((r) => rude.listen(sock2, r));
  t.after(() => rude.close());
  await assert.rejects(connectChild({ socket: sock2, token: "t" }), (e) => ["ERR_DIAGRELAY_CLOSED", "EPIPE", "ECONNRESET"].includes(e.code));
  assert.equal(events.count(PROBE_TOPIC), 0);
});

test("a bus whose on() throws: the bridge rejects and leaves nothing hosted", T, async (t) => {
  const host = await startHost(t);
  const rt = await host.open("/root/badbus");
  const inner = createBus();
  let calls = 0;
  const events = {
    on(topic, fn) {
      if (++calls === 2) throw new Error("bus full");
      return inner.on(topic, fn);
    },
    emit: inner.emit,
  };
  await assert.rejects(bridgeChildBus(events, { socket: host.socket, token: rt.token }), /bus full/);
  let hosted = false;
  inner.emit(PROBE_TOPIC, { respond: () => { hosted = true; } });
  assert.equal(hosted, false);
  assert.equal(inner.count(PROBE_TOPIC), 0, "the first handler was removed again");
});
