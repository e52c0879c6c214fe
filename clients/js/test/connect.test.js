// Connecting under a full listen backlog: a Unix connect then fails with
// EAGAIN at once, and the client dials again within its connect bound. The
// listener is another Node process that stops accepting for a while (its
// event loop blocked), so the backlog fills for real.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";
import path from "node:path";
import { test } from "node:test";
import { connectChild } from "../index.js";
import { shortDir } from "./helpers.js";

// Listens with a backlog of 1, says "ready", blocks for STALL ms (no
// accepts), then answers session.hello and diagnostic.probe as serve does.
const LISTENER = `
const net = require("node:net");
const srv = net.createServer((c) => {
  let buf = "";
  c.on("error", () => {});
  c.on("data", (d) => {
    buf += d;
    let nl;
    while ((nl = buf.indexOf("\\n")) >= 0) {
      const m = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      const result = m.method === "session.hello" ? { role: "child", path: "/root/x", generation: 1 } : { version: "1.1.0", protocol: 1 };
      c.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result }) + "\\n");
    }
  });
});
srv.listen({ path: process.argv[1], backlog: 1 }, () => {
  process.stdout.write("ready\\n");
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(process.argv[2]));
});
`;

test("connect retries EAGAIN (a full backlog) within its bound", { timeout: 30_000 }, async (t) => {
  const dir = shortDir(t);
  const socket = path.join(dir, "s");
  const proc = spawn(process.execPath, ["-e", LISTENER, socket, "700"], { stdio: ["ignore", "pipe", "inherit"] });
  t.after(() => proc.kill("SIGKILL"));
  await new Promise((resolve) => proc.stdout.once("data", resolve));
  // Fill the backlog: connects past it fail with EAGAIN at once.
  const fillers = [];
  let eagain = 0;
  for (let i = 0; i < 8; i++) {
    const c = net.createConnection(socket);
    fillers.push(c);
    await new Promise((resolve) => {
      c.once("connect", resolve);
      c.once("error", (e) => {
        if (e.code === "EAGAIN") eagain++;
        resolve(undefined);
      });
    });
  }
  t.after(() => fillers.forEach((c) => c.destroy()));
  assert.ok(eagain > 0, "the backlog never filled: no EAGAIN to retry");
  const started = Date.now();
  const child = await connectChild({ socket, token: "t", timeout: 5000 });
  assert.deepEqual(child.capability, { version: "1.1.0", protocol: 1 });
  assert.ok(Date.now() - started < 5000);
  await child.close();
});

test("EAGAIN past the bound is the bound's ETIMEDOUT", { timeout: 30_000 }, async (t) => {
  const dir = shortDir(t);
  const socket = path.join(dir, "s");
  const proc = spawn(process.execPath, ["-e", LISTENER, socket, "3000"], { stdio: ["ignore", "pipe", "inherit"] });
  t.after(() => proc.kill("SIGKILL"));
  await new Promise((resolve) => proc.stdout.once("data", resolve));
  const fillers = [];
  for (let i = 0; i < 8; i++) {
    const c = net.createConnection(socket);
    c.on("error", () => {});
    fillers.push(c);
  }
  t.after(() => fillers.forEach((c) => c.destroy()));
  await new Promise((resolve) => setTimeout(resolve, 100));
  await assert.rejects(connectChild({ socket, token: "t", timeout: 300 }), { code: "ETIMEDOUT" });
});
