#!/usr/bin/env node
// Admitted reports per second through each client (the service's reply to
// each is "admitted", so the report is durable in the mailbox), for 1 and
// 16 children, the JavaScript package and the Go package `client` side by
// side against one `diagrelay serve`, rounds interleaved.
//
//   cd clients/js && node bench/bench.js [--rounds 5] [--reports 2000]
//
// What the service's limits make of a benchmark (docs/performance.md): a
// runtime delivers at most diag.MaxPerWindow (5) reports per 10 s window,
// and a child whose reports the gate drops is paced to 200 frames/s after
// 50 (service.PaceDroppedRate/Burst). A benchmark that sent one runtime
// thousands of reports would measure that pacer and nothing else. So here
// every report is admitted: each child works through fresh runtimes, opened
// before the timing, and sends each one its window of 5 reports with
// unique messages (connect and hello, 5 reports, close, next runtime), and
// each run checks that every report was delivered and none dropped. The
// rate therefore includes one connection and hello per 5 reports, as a
// child that lives for a window's worth of reports pays. No report is
// paced.
//
// Needs DIAGRELAY_BIN or builds the binary, and builds bench/gopeer.go.
// Contenders, per runtime:
//   js-bridge   bridgeChildBus: an extension emits its 5 reports
//               synchronously on the bus, then flush
//   js-child    connectChild().report(), one await at a time
//   go-seq      client.Child.Report, one at a time
//   go-window   client.Child.Report from 5 goroutines: the window at once

import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { bridgeChildBus, connectChild, Host, REPORT_TOPIC } from "../index.js";
import { createBus, diagrelayBin, repoRoot } from "../test/helpers.js";

const { values: opts } = parseArgs({
  options: { rounds: { type: "string", default: "5" }, reports: { type: "string", default: "2000" } },
});
const ROUNDS = Number(opts.rounds);
const TOTAL = Number(opts.reports); // per run, split among the children
const PER_RUNTIME = 5; // diag.MaxPerWindow: all admitted

const tmp = fs.mkdtempSync("/tmp/drjs-bench-");
const gopeer = path.join(tmp, "gopeer");
execFileSync("go", ["build", "-o", gopeer, "clients/js/bench/gopeer.go"], { cwd: repoRoot, stdio: "inherit" });
const host = await Host.start({ data: tmp, socket: path.join(tmp, "s"), bin: diagrelayBin(), mode: "print" });

let seq = 0;
/** openChildren opens, for each of n children, the runtimes its reports need. */
async function openChildren(n, perChild) {
  const children = [];
  for (let c = 0; c < n; c++) {
    const rts = [];
    for (let i = 0; i < perChild / PER_RUNTIME; i++) rts.push({ ...(await host.open(`/root/b${++seq}`)) });
    children.push(rts);
  }
  return children;
}

// checkVerdicts confirms that every report was admitted: each runtime
// delivered its PER_RUNTIME reports and dropped none.
async function checkVerdicts(children) {
  for (const rt of children.flat()) {
    const st = await host.status(rt.path);
    const d = st.dropped;
    const dropped = d.duplicate + d.rate + d.cap + d.invalid;
    if (st.diagnostics.length !== PER_RUNTIME || dropped !== 0) {
      throw new Error(`${rt.path}: ${st.diagnostics.length} delivered, ${dropped} dropped, of ${PER_RUNTIME} reports`);
    }
  }
}

const message = (rt, i) => `${rt.path} report ${i}`; // unique: never a duplicate

async function jsBridge(children) {
  const cpu0 = process.cpuUsage();
  const start = process.hrtime.bigint();
  await Promise.all(children.map(async (rts) => {
    for (const rt of rts) {
      const events = createBus();
      const bridge = await bridgeChildBus(events, { socket: host.socket, token: rt.token });
      for (let i = 0; i < PER_RUNTIME; i++) events.emit(REPORT_TOPIC, { level: "info", message: message(rt, i), source: "bench" });
      await bridge.flush();
      if (bridge.dropped || bridge.refused) throw new Error(`bridge dropped ${bridge.dropped}, refused ${bridge.refused}`);
      await bridge.close();
    }
  }));
  return { ns: Number(process.hrtime.bigint() - start), cpu: cpuNs(cpu0) };
}

async function jsChild(children) {
  const cpu0 = process.cpuUsage();
  const start = process.hrtime.bigint();
  await Promise.all(children.map(async (rts) => {
    for (const rt of rts) {
      const c = await connectChild({ socket: host.socket, token: rt.token });
      for (let i = 0; i < PER_RUNTIME; i++) await c.report("info", message(rt, i), "bench");
      await c.close();
    }
  }));
  return { ns: Number(process.hrtime.bigint() - start), cpu: cpuNs(cpu0) };
}

function goPeer(inflight) {
  return (children) => new Promise((resolve, reject) => {
    const p = spawn(gopeer, ["-socket", host.socket, "-per", String(PER_RUNTIME), "-inflight", String(inflight)], { stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (c) => (out += c));
    p.on("error", reject);
    p.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`gopeer exited ${code}`));
      const r = JSON.parse(out);
      if (r.errors) return reject(new Error(`gopeer: ${r.errors} errors`));
      resolve({ ns: r.elapsedNs, cpu: r.cpuNs });
    });
    // One line per child: its runtimes' paths and tokens, in order.
    p.stdin.end(children.map((rts) => rts.map((rt) => `${rt.path}=${rt.token}`).join(" ")).join("\n") + "\n");
  });
}

const contenders = { "js-bridge": jsBridge, "js-child": jsChild, "go-seq": goPeer(1), "go-window": goPeer(PER_RUNTIME) };
/** cpuNs is this process's user+system time since cpu0, in ns. */
function cpuNs(cpu0) {
  const d = process.cpuUsage(cpu0);
  return (d.user + d.system) * 1000;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  for (const n of [1, 16]) {
    const perChild = Math.max(PER_RUNTIME, Math.floor(TOTAL / n / PER_RUNTIME) * PER_RUNTIME);
    const rates = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
    const cpus = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, run] of Object.entries(contenders)) {
        const children = await openChildren(n, perChild);
        const { ns, cpu } = await run(children);
        await checkVerdicts(children);
        rates[name].push((n * perChild) / (ns / 1e9));
        cpus[name].push(cpu / 1000 / (n * perChild));
        for (const rt of children.flat()) await host.close(rt.path);
      }
    }
    console.log(`${n} child${n > 1 ? "ren" : ""}, ${n * perChild} admitted reports per run (${PER_RUNTIME} per fresh runtime, none paced), ${ROUNDS} rounds: median reports/s (min-max), client CPU µs/report`);
    for (const [name, xs] of Object.entries(rates)) {
      const range = `(${Math.round(Math.min(...xs))}-${Math.round(Math.max(...xs))})`;
      console.log(`  ${name.padEnd(10)} ${Math.round(median(xs)).toString().padStart(8)} ${range.padEnd(16)} ${median(cpus[name]).toFixed(1).padStart(6)}`);
    }
    const m = (k) => median(rates[k]);
    console.log(`  ratios: js-bridge/go-window ${(m("js-bridge") / m("go-window")).toFixed(2)}, js-child/go-seq ${(m("js-child") / m("go-seq")).toFixed(2)}`);
  }
} finally {
  await host.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}
