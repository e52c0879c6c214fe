// Host against the real service: start, the host methods, notifications,
// failures to start, and calls pending when the service exits.

import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { test } from "node:test";
import { Host, RPCError, connectChild } from "../index.js";
import { diagrelayBin, shortDir, startHost, waitFor } from "./helpers.js";

const T = { timeout: 20_000 };

test("open, reopen, status, mailbox, ack, close, stop", T, async (t) => {
  const host = await startHost(t);
  assert.ok(Number.isInteger(host.pid) && host.pid > 0);
  assert.ok(fs.statSync(host.socket).isSocket());
  const first = await host.open("/root/a");
  assert.equal(first.path, "/root/a");
  assert.equal(first.generation, 1);
  assert.match(first.token, /^\S{16,}$/);
  const again = await host.open("/root/a");
  assert.equal(again.generation, 2);
  assert.notEqual(again.token, first.token);

  const child = await connectChild({ socket: host.socket, token: again.token });
  for (const m of ["one", "two", "three"]) await child.report("info", m, "t");
  await child.close();
  await waitFor(() => host.notes.length === 3, 3000, "notifications");
  assert.deepEqual(host.notes.map((n) => n.message), ["/root/a [t]: one", "/root/a [t]: two", "/root/a [t]: three"]);

  const st = await host.status("/root/a");
  assert.equal(st.path, "/root/a");
  assert.equal(st.parent, "/root");
  assert.deepEqual(st.diagnostics.map((d) => d.message), ["one", "two", "three"]);
  assert.ok(!Number.isNaN(Date.parse(st.diagnostics[0].at)));

  const two = await host.readMailbox("/root", 2);
  assert.deepEqual(two.map((m) => m.message), ["one", "two"]);
  assert.equal(await host.ack("/root", two.map((m) => m.id)), 2);
  assert.equal(await host.ack("/root", two.map((m) => m.id)), 0, "acknowledged once");
  assert.deepEqual((await host.readMailbox("/root")).map((m) => m.message), ["three"]);

  await host.close("/root/a");
  await assert.rejects(host.status("/root/never"), (e) => e instanceof RPCError && e.code === -32004);
  await assert.rejects(host.open("no-slash"), { code: -32602 });
  await assert.rejects(host.readMailbox("/root", 0), { code: -32602 });

  const exits = [];
  host.on("exit", (code, signal) => exits.push([code, signal]));
  await host.stop();
  assert.deepEqual(host.exitStatus, { code: 0, signal: null });
  assert.deepEqual(exits, [[0, null]]);
  assert.ok(!fs.existsSync(host.socket), "a clean stop removes the socket");
  await host.stop(); // idempotent
  await assert.rejects(host.status("/root/a"), { code: "ERR_DIAGRELAY_EXITED" });
});

test("the mailbox survives a restart on the same data directory", T, async (t) => {
  const data = shortDir(t);
  const start = () => Host.start({ data, socket: path.join(data, "s"), bin: diagrelayBin() });
  let host = await start();
  const rt = await host.open("/root/d");
  const child = await connectChild({ socket: host.socket, token: rt.token });
  await child.report("error", "durable", "d");
  await child.close();
  await host.stop();
  host = await start();
  t.after(() => host.stop());
  assert.deepEqual((await host.readMailbox("/root")).map((m) => [m.from, m.message]), [["/root/d", "durable"]]);
});

test("print mode sends no notifications", T, async (t) => {
  const host = await startHost(t, { mode: "print" });
  const rt = await host.open("/root/p");
  const child = await connectChild({ socket: host.socket, token: rt.token });
  await child.report("warning", "quiet");
  await child.close();
  assert.equal((await host.readMailbox("/root")).length, 1);
  assert.deepEqual(host.notes, []);
});

test("calls pending when the service exits reject", T, async (t) => {
  const host = await startHost(t);
  const calls = [host.open("/root/p1"), host.status("/root"), host.readMailbox("/root")];
  process.kill(host.pid, "SIGKILL");
  for (const c of calls) {
    const r = await c.then(() => "resolved", (e) => e);
    // A call may have been answered before the kill; none may hang.
    if (r !== "resolved") assert.equal(r.code, "ERR_DIAGRELAY_EXITED");
  }
  await waitFor(() => host.exitStatus, 3000, "the exit");
  assert.equal(host.exitStatus.signal, "SIGKILL");
  await assert.rejects(host.threads(), { code: "ERR_DIAGRELAY_EXITED" });
});

test("start fails clearly", T, async (t) => {
  const dir = shortDir(t);
  await assert.rejects(Host.start({ socket: path.join(dir, "s"), bin: path.join(dir, "no-such-binary") }), { code: "ENOENT" });
  await assert.rejects(Host.start({ data: "", bin: diagrelayBin() }), TypeError);
  await assert.rejects(
    Host.start({ data: dir, socket: path.join(dir, "s"), bin: diagrelayBin(), mode: "loud" }),
    /exited before listening.*mode/s,
  );
  // Another server on the socket: refused before anything is spawned.
  const other = net.createServer(() => {});
  const sock = path.join(dir, "busy");
  await new Promise((r) => other.listen(sock, r));
  t.after(() => other.close());
  await assert.rejects(Host.start({ data: dir, socket: sock, bin: diagrelayBin() }), /another server is listening/);
});
