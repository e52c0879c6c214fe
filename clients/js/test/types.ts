// Type-checked by `tsc` (tsconfig.json), never run: every name and shape
// index.d.ts promises, and some misuses it must refuse.
import {
  bridgeChildBus, connectChild, Host, RPCError, PROBE_TOPIC, REPORT_TOPIC, MAX_UNANSWERED, MIN_VERSION,
  type Bridge, type Capability, type Child, type EventBus, type MailboxMessage, type Notification,
  type Runtime, type ServiceEvent, type ThreadStatus, type ThreadSummary, type ProbeRequest, type Report,
} from "diagrelay";

export async function usage(events: EventBus): Promise<void> {
  const bridge: Bridge = await bridgeChildBus(events, { socket: "/tmp/s", token: "t", timeout: 1000 });
  const counts: number = bridge.dropped + bridge.refused + bridge.unanswered;
  const cap: Capability = bridge.capability;
  const ok: boolean = bridge.connected;
  bridge.on("error", (err: Error) => void err.message).on("refused", (err: RPCError) => void err.code);
  await bridge.flush();
  await bridge.close();
  void [counts, cap, ok];

  const probe: ProbeRequest = { respond: (c) => void c.version };
  events.emit(PROBE_TOPIC, probe);
  const report: Report = { level: "warning", message: "m", source: "s" };
  events.emit(REPORT_TOPIC, report);
  // @ts-expect-error: the level is one of three words
  const bad: Report = { level: "fatal", message: "m" };
  void bad;

  const child: Child = await connectChild();
  const c: Capability | null = await child.probe(MIN_VERSION);
  await child.report("info", "m");
  await child.report("error", "m", "src");
  // @ts-expect-error: the level is one of three words
  await child.report("debug", "m");
  await child.close();
  void c;

  const host: Host = await Host.start({ data: "/tmp/d", socket: "/tmp/d/s", mode: "print", bin: "diagrelay" });
  const rt: Runtime = await host.open("/root/x", { parent: "/root" });
  const tok: string = rt.token;
  const gen: number = rt.generation;
  await host.open("/k", { owner: "/root" });
  const st: ThreadStatus = await host.status("/root/x");
  const n: number = st.dropped.duplicate + st.dropped.rate + st.dropped.cap + st.dropped.invalid;
  const list: ThreadSummary[] = await host.threads();
  const held: number = list[0]?.diagnostics ?? 0;
  const msgs: MailboxMessage[] = await host.readMailbox("/root", 10);
  const acked: number = await host.ack("/root", msgs.map((m) => m.id));
  await host.subscribe();
  host.on("notify", (x: Notification) => void x.notifyType)
    .on("event", (e: ServiceEvent) => void e.kind)
    .on("exit", (code, signal) => void [code, signal]);
  const env: { DIAGRELAY_SOCKET: string; DIAGRELAY_TOKEN: string } = host.childEnv(tok);
  const pid: number = host.pid;
  await host.close("/root/x");
  await host.stop({ timeout: 100 });
  // @ts-expect-error: options are required
  await Host.start();
  void [gen, n, held, acked, env, pid, MAX_UNANSWERED];

  try {
    await connectChild({ token: "bad" });
  } catch (err) {
    if (err instanceof RPCError) {
      const code: number = err.code;
      void code;
    }
  }
}

export async function boundPeerTypes(host: Host): Promise<void> {
  const rt: Runtime = await host.open("/root/b", { bind: true });
  const st: ThreadStatus = await host.status(rt.path);
  const pid: number | undefined = st.peer?.pid;
  const exited: string | undefined = st.exited;
  const list: ThreadSummary[] = await host.threads();
  const refused: number | undefined = list[0]?.peer_refused;
  void [pid, exited, refused];
}

// The bridge's lifecycle and diagrelay/pi (docs/pi.md), as the declarations give them.
import { bridgeChildBus as bridge2, findBinary, CLOSE_TIMEOUT, type EventBus as Bus2 } from "diagrelay";
import {
  hostFor, CHILD_EXTENSION, INPROC_EXTENSION, HOST_PROBE_TOPIC, MESSAGE_TYPE, VERSION,
  type PiChild, type PiHost, type HostProbeRequest, type RunResult, type PiThreadStatus,
} from "diagrelay/pi";

export async function lifecycle(events: Bus2): Promise<void> {
  const maybe = await bridge2(events, { optional: true });
  if (maybe !== null) {
    await maybe.close({ timeout: CLOSE_TIMEOUT });
    maybe.destroy();
  }
  const sure = await bridge2(events, { timeout: 500 });
  const unanswered: number = sure.unanswered;
  const bin: string = findBinary({ env: {} });
  const pi = { events, sendMessage: () => {} };
  const child: PiChild = await hostFor(pi).open("/root/x", { parent: "/root" });
  const args: string[] = child.args;
  const env: string = child.env.DIAGRELAY_TOKEN;
  const attached = await child.attach(events);
  // @ts-expect-error: attach resolves to null once the service is gone
  await attached.close();
  await attached?.close();
  const st: PiThreadStatus = await child.status();
  const stale: boolean = st.stale === true;
  await child.close();
  const host: PiHost = hostFor();
  const r: RunResult = await host.run("/root/y", ["-p", "task"], { cwd: "/tmp", env: { A: "1" }, signal: new AbortController().signal, onLine: (l: string) => void l });
  const code: number | null = r.code;
  const out: string = r.stdout + r.stderr;
  const last: PiThreadStatus | null = r.status;
  const probe: HostProbeRequest = { respond: (h) => void h.run };
  events.emit(HOST_PROBE_TOPIC, probe);
  const v: string = host.version + VERSION;
  const one: 1 = host.protocol;
  const t: "diagrelay" = MESSAGE_TYPE;
  void [unanswered, bin, args, env, CHILD_EXTENSION, INPROC_EXTENSION, stale, code, out, last, v, one, t];
}
