// Bound tokens through the JS Host against the real service: bindPeer and
// open's bind, the peer and exited members of status and threads(), and
// the exited event (docs/protocol.md, "Bound tokens").

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { connectChild } from "../index.js";
import { repoRoot, startHost, waitFor } from "./helpers.js";

const T = { timeout: 20_000 };
const index = path.join(repoRoot, "clients/js/index.js");

// childProcess runs a node process that connects with token, reports once,
// prints "ready" and stays until its stdin ends.
function childProcess(t, host, token) {
  const src = `import { connectChild } from ${JSON.stringify(index)};
const c = await connectChild({ socket: process.env.S, token: process.env.T });
await c.report("info", "from a bound process", "peer");
console.log("ready");
process.stdin.resume();
process.stdin.on("end", () => c.close().then(() => process.exit(0)));`;
  const proc = spawn(process.execPath, ["--input-type=module", "-e", src], {
    env: { ...process.env, S: host.socket, T: token },
    stdio: ["pipe", "pipe", "inherit"],
  });
  t.after(() => proc.kill("SIGKILL"));
  const ready = new Promise((resolve, reject) => {
    proc.stdout.on("data", (b) => b.toString().includes("ready") && resolve());
    proc.once("exit", (code) => reject(new Error(`child exited ${code} before it was ready`)));
  });
  return { proc, ready };
}

test("bindPeer: the first process owns the token; its exit shows", T, async (t) => {
  const host = await startHost(t, { bindPeer: true });
  const events = [];
  host.on("event", (e) => events.push(e));
  await host.subscribe();
  const rt = await host.open("/root/bound");
  const { proc, ready } = childProcess(t, host, rt.token);
  await ready;

  const st = await host.status("/root/bound");
  assert.equal(st.peer.pid, proc.pid);
  assert.equal(st.peer.uid, process.getuid());
  assert.equal(st.exited, undefined);
  // This process is not the bound one, nor its descendant.
  await assert.rejects(connectChild({ socket: host.socket, token: rt.token }), { code: -32001 });
  assert.equal((await host.status("/root/bound")).peer_refused, 1);

  proc.kill("SIGKILL");
  await waitFor(() => events.some((e) => e.kind === "exited" && e.thread === "/root/bound"), 5000, "the exited event");
  const after = await host.status("/root/bound");
  assert.ok(!Number.isNaN(Date.parse(after.exited)), `exited: ${after.exited}`);
  assert.equal(after.open, true);
  const listed = (await host.threads()).find((th) => th.path === "/root/bound");
  assert.equal(listed.exited, after.exited);
  assert.equal(listed.peer.pid, proc.pid);

  // bind: false opts out: any process may use the token.
  const free = await host.open("/root/free", { bind: false });
  const c = await connectChild({ socket: host.socket, token: free.token });
  await c.close();
  assert.equal((await host.status("/root/free")).peer, undefined);
});
