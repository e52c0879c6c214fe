#!/usr/bin/env node
// Reports per second through each client to a verdict (the service's reply:
// admitted, so durable, or dropped by policy), for 1 and 16 children, the
// JavaScript package and the Go package `client` side by side against one
// `diagrelay serve`, rounds interleaved. Every round uses fresh runtimes.
//
//   cd clients/js && node bench/bench.js [--rounds 5] [--reports 20000]
//
// Needs DIAGRELAY_BIN or builds the binary, and builds bench/gopeer.go.
// Contenders:
//   js-bridge   bridgeChildBus: an extension emits synchronously on the bus,
//               bursts of 500, flush between bursts (the bound is 1000)
//   js-child    connectChild().report(), one await at a time
//   go-seq      client.Child.Report, one at a time
//   go-64       client.Child.Report from 64 goroutines per child

import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { bridgeChildBus, connectChild, Host, REPORT_TOPIC } from "../index.js";
import { createBus, diagrelayBin, repoRoot } from "../test/helpers.js";

const { values: opts } = parseArgs({
  options: { rounds: { type: "string", default: "5" }, reports: { type: "string", default: "20000" } },
});
const ROUNDS = Number(opts.rounds);
const TOTAL = Number(opts.reports); // per run, split among the children
const BURST = 500;

const tmp = fs.mkdtempSync("/tmp/drjs-bench-");
const gopeer = path.join(tmp, "gopeer");
execFileSync("go", ["build", "-o", gopeer, "clients/js/bench/gopeer.go"], { cwd: repoRoot, stdio: "inherit" });
const host = await Host.start({ data: tmp, socket: path.join(tmp, "s"), bin: diagrelayBin(), mode: "print" });

let seq = 0;
async function openRuntimes(n) {
  const rts = [];
  for (let i = 0; i < n; i++) rts.push({ ...(await host.open(`/root/b${++seq}`)) });
  return rts;
}

// checkVerdicts confirms that every report reached a verdict the service
// counted: delivered plus dropped equals what was sent.
async function checkVerdicts(rts, perChild) {
  for (const rt of rts) {
    const st = await host.status(rt.path);
    const d = st.dropped;
    const seen = st.diagnostics.length + d.duplicate + d.rate + d.cap + d.invalid;
    if (seen !== perChild) throw new Error(`${rt.path}: ${seen} verdicts for ${perChild} reports`);
  }
}

async function jsBridge(rts, perChild) {
  const children = [];
  for (const rt of rts) {
    const events = createBus();
    children.push({ events, bridge: await bridgeChildBus(events, { socket: host.socket, token: rt.token }) });
  }
  const cpu0 = process.cpuUsage();
  const start = process.hrtime.bigint();
  await Promise.all(children.map(async ({ events, bridge }) => {
    for (let sent = 0; sent < perChild;) {
      const end = Math.min(perChild, sent + BURST);
      for (; sent < end; sent++) events.emit(REPORT_TOPIC, { level: "info", message: `report ${sent}`, source: "bench" });
      await bridge.flush();
    }
  }));
  const ns = Number(process.hrtime.bigint() - start);
  const cpu = cpuNs(cpu0);
  for (const { bridge } of children) {
    if (bridge.dropped || bridge.refused) throw new Error(`bridge dropped ${bridge.dropped}, refused ${bridge.refused}`);
    await bridge.close();
  }
  return { ns, cpu };
}

async function jsChild(rts, perChild) {
  const children = await Promise.all(rts.map((rt) => connectChild({ socket: host.socket, token: rt.token })));
  const cpu0 = process.cpuUsage();
  const start = process.hrtime.bigint();
  await Promise.all(children.map(async (c) => {
    for (let i = 0; i < perChild; i++) await c.report("info", `report ${i}`, "bench");
  }));
  const ns = Number(process.hrtime.bigint() - start);
  const cpu = cpuNs(cpu0);
  await Promise.all(children.map((c) => c.close()));
  return { ns, cpu };
}

function goPeer(inflight) {
  return (rts, perChild) => new Promise((resolve, reject) => {
    const p = spawn(gopeer, ["-socket", host.socket, "-n", String(perChild), "-inflight", String(inflight)], { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (c) => (out += c));
    p.on("error", reject);
    p.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`gopeer exited ${code}`));
      const r = JSON.parse(out);
      if (r.errors) return reject(new Error(`gopeer: ${r.errors} errors`));
      resolve({ ns: r.elapsedNs, cpu: r.cpuNs });
    });
    p.stdin.end(rts.map((rt) => rt.token).join("\n") + "\n");
  });
}

const contenders = { "js-bridge": jsBridge, "js-child": jsChild, "go-seq": goPeer(1), "go-64": goPeer(64) };
/** cpuNs is this process's user+system time since cpu0, in ns. */
function cpuNs(cpu0) {
  const d = process.cpuUsage(cpu0);
  return (d.user + d.system) * 1000;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  for (const n of [1, 16]) {
    const perChild = Math.floor(TOTAL / n);
    const rates = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
    const cpus = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, run] of Object.entries(contenders)) {
        const rts = await openRuntimes(n);
        const { ns, cpu } = await run(rts, perChild);
        await checkVerdicts(rts, perChild);
        rates[name].push((n * perChild) / (ns / 1e9));
        cpus[name].push(cpu / 1000 / (n * perChild));
        for (const rt of rts) await host.close(rt.path);
      }
    }
    console.log(`${n} child${n > 1 ? "ren" : ""}, ${n * perChild} reports per run, ${ROUNDS} rounds: median reports/s (min-max), client CPU µs/report`);
    for (const [name, xs] of Object.entries(rates)) {
      const range = `(${Math.round(Math.min(...xs))}-${Math.round(Math.max(...xs))})`;
      console.log(`  ${name.padEnd(10)} ${Math.round(median(xs)).toString().padStart(8)} ${range.padEnd(16)} ${median(cpus[name]).toFixed(1).padStart(6)}`);
    }
    const m = (k) => median(rates[k]);
    console.log(`  ratios: js-bridge/go-64 ${(m("js-bridge") / m("go-64")).toFixed(2)}, js-child/go-seq ${(m("js-child") / m("go-seq")).toFixed(2)}`);
  }
} finally {
  await host.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}
