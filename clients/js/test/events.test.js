// thread.list and events.subscribe through Host.threads(), subscribe() and
// on("event"), against the real service.

import assert from "node:assert/strict";
import { test } from "node:test";
import { bridgeChildBus } from "../index.js";
import { createBus, report, startHost, waitFor } from "./helpers.js";

const T = { timeout: 20_000 };

test("threads() lists every thread, sorted by path", T, async (t) => {
  const host = await startHost(t);
  assert.deepEqual(await host.threads(), []);
  await host.open("/root/b");
  const k = await host.open("/k", { owner: "/root" });
  await host.open("/root/a");
  await host.open("/root/a"); // generation 2
  await host.close("/root/b");
  const pi = { events: createBus() };
  const bridge = await bridgeChildBus(pi.events, { socket: host.socket, token: k.token });
  report(pi, "info", "one", "s");
  report(pi, "info", "one", "s");
  await bridge.close();
  const zero = { duplicate: 0, rate: 0, cap: 0, invalid: 0 };
  assert.deepEqual(await host.threads(), [
    { path: "/k", parent: "", owner: "/root", open: true, generation: 1, diagnostics: 1, dropped: { ...zero, duplicate: 1 }, redacted: {} },
    { path: "/root/a", parent: "/root", owner: "", open: true, generation: 2, diagnostics: 0, dropped: zero, redacted: {} },
    { path: "/root/b", parent: "/root", owner: "", open: false, generation: 1, diagnostics: 0, dropped: zero, redacted: {} },
  ]);
});

test("subscribe() streams events; none before it", T, async (t) => {
  const host = await startHost(t);
  const events = [];
  host.on("event", (e) => events.push(e));
  await host.open("/root/early");
  await host.threads(); // a round trip: anything sent before it has arrived
  assert.deepEqual(events, [], "a host that has not subscribed gets no events");

  await host.subscribe();
  const rt = await host.open("/root/w");
  const pi = { events: createBus() };
  const bridge = await bridgeChildBus(pi.events, { socket: host.socket, token: rt.token });
  report(pi, "warning", "watch \x1b[31mme", "lint");
  report(pi, "warning", "watch \x1b[31mme", "lint");
  await bridge.close();
  await host.open("/root/w");
  await host.close("/root/w");
  await waitFor(() => events.some((e) => e.kind === "closed"), 3000, "the closed event");
  const seen = events.map((e) => [e.kind, e.thread]);
  for (const want of [["opened", "/root/w"], ["delivered", "/root/w"], ["dropped", "/root/w"], ["notified", "/root/w"], ["reopened", "/root/w"], ["closed", "/root/w"]]) {
    assert.ok(seen.some((s) => s[0] === want[0] && s[1] === want[1]), `no ${want}: ${JSON.stringify(seen)}`);
  }
  const delivered = events.find((e) => e.kind === "delivered");
  assert.equal(delivered.level, "warning");
  assert.equal(delivered.source, "lint");
  assert.equal(delivered.message, "watch me", "events carry sanitized text");
  assert.equal(events.find((e) => e.kind === "dropped").reason, "duplicate");
  assert.equal(events.find((e) => e.kind === "reopened").generation, 2);
  for (const e of events) assert.ok(!Number.isNaN(Date.parse(e.at)));
});
