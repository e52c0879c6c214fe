// A child session whose extensions use pi's event bus, bridged to
// `diagrelay serve` with one call. The extension is written exactly as the
// original documents its report() helper and knows nothing of diagrelay.
import { bridgeChildBus, type Bridge, type EventBus } from "diagrelay";

type Pi = { events: EventBus };

// The original's helper, unchanged (types added).
function report(pi: Pi, level: "info" | "warning" | "error", message: string, source?: string): boolean {
  // This synchronous, child-local probe identifies a LIVE manager host.
  let hosted = false;
  pi.events.emit("pi-subagent-manager:diagnostic:probe", {
    respond: (capability?: { version?: unknown; protocol?: unknown }) => {
      hosted = capability?.protocol === 1 && typeof capability.version === "string";
    },
  });
  if (hosted) {
    pi.events.emit("pi-subagent-manager:diagnostic", { level, message, source });
  } else {
    console.error(`${source ?? "extension"}: ${level}: ${message}`); // normal top-level reporting
  }
  return hosted;
}

// An extension as pi loads it: a factory that receives the pi API.
function lintExtension(pi: Pi): void {
  const hosted = report(pi, "warning", "lint config not found, using defaults", "lint");
  console.log(`lint: hosted=${hosted}`);
}

// A bus with pi's shape (in pi this is the child session's pi.events).
function createEventBus(): EventBus {
  const handlers = new Map<string, Set<(data: unknown) => void>>();
  return {
    on(topic, handler) {
      const set = handlers.get(topic) ?? new Set();
      handlers.set(topic, set);
      set.add(handler);
      return () => set.delete(handler);
    },
    emit(topic, data) {
      for (const handler of [...(handlers.get(topic) ?? [])]) handler(data);
    },
  };
}

const events = createEventBus();
// The session runner bridges the bus before it loads extensions. Without
// DIAGRELAY_SOCKET/DIAGRELAY_TOKEN (a normal top-level session) there is no
// host, and extensions fall back.
let bridge: Bridge | undefined;
try {
  bridge = await bridgeChildBus(events);
  bridge.on("error", (err) => console.error(err.message));
} catch (err) {
  console.error(`no diagrelay host: ${(err as Error).message}`);
}
lintExtension({ events });
await bridge?.close(); // after the session's shutdown hooks: flushes first
