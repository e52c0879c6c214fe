// The extension for children created in this process, as pi-subagents runs
// its foreground children (list it first in pi-subagents' settings:
// `"subagents": {"defaultExtensions": [<this file>]}`). In such a child it
// opens a thread named after the child, `/root/<agent>-<n>` (the agent's
// name from the session's system prompt, else the session's name, else
// `subagent`), bridges the child session's own bus, and closes the thread
// after the child's shutdown. The name is known only at session_start, so
// from the factory until then it answers the probe itself (the process's
// Host is running: it started it) and keeps the reports, at most
// MAX_UNANSWERED, to forward once the thread is open. Anywhere else (the
// parent's own session, a process with no parent session, a hosted child)
// it installs nothing. docs/pi.md ("In-process children").

import { MAX_UNANSWERED, PROBE_TOPIC, REPORT_TOPIC } from "../lib/bridge.js";
import { hostFor, startedRootHost } from "../lib/pi-host.js";
import { afterShutdown, hostedChild, registry } from "../lib/pi-registry.js";

/** After the child's shutdown, the thread closes at most this many ms later. */
const CLOSE_AFTER = 5000;

/**
 * childName is the thread name of an in-process child: what its session
 * knows of its agent, as a path segment.
 * @param {any} ctx the session_start context
 * @param {any} pi
 */
export function childName(ctx, pi) {
  let name = "";
  try {
    const prompt = String(ctx?.getSystemPrompt?.() ?? "");
    name = /<active_agent name="([^"]*)"\s*\/>/.exec(prompt)?.[1] ?? "";
  } catch {
    // an older pi: no system prompt on the context
  }
  if (!name) {
    try {
      name = String(pi.getSessionName?.() ?? "");
    } catch {
      // no session name
    }
  }
  const segment = name.replace(/&[a-z]+;|&#\d+;/g, "-").replace(/[^A-Za-z0-9_-]+/g, "-").replace(/^[-_]+|-+$/g, "").slice(0, 48);
  return segment || "subagent";
}

/** A bus of our own, for the bridge once the thread is open. */
function privateBus() {
  /** @type {Map<string, Set<(data: unknown) => void>>} */
  const topics = new Map();
  return {
    on(/** @type {string} */ topic, /** @type {(data: unknown) => void} */ fn) {
      if (!topics.has(topic)) topics.set(topic, new Set());
      topics.get(topic)?.add(fn);
      return () => void topics.get(topic)?.delete(fn);
    },
    emit(/** @type {string} */ topic, /** @type {unknown} */ data) {
      for (const fn of [...(topics.get(topic) ?? [])]) fn(data);
    },
  };
}

/** @param {any} pi */
export default async function diagrelayInproc(pi) {
  const reg = registry();
  if (hostedChild() || !reg.parent || reg.parent.pi === pi) return;
  let capability;
  try {
    capability = (await startedRootHost()).capability;
  } catch {
    return; // no Host to be had: the child keeps its extensions' own fallback
  }
  if (!capability) return;
  const n = ++reg.inproc;
  const bus = privateBus();
  /** @type {unknown[]} */
  const early = [];
  /** @type {"early" | "open" | "done"} */
  let state = "early";
  /** @type {import("../lib/pi-host.js").PiChild | null} */
  let child = null;
  const offs = [
    pi.events.on(PROBE_TOPIC, (/** @type {any} */ req) => {
      if (state === "open") bus.emit(PROBE_TOPIC, req);
      else if (state === "early") {
        try {
          req?.respond?.({ version: capability.version, protocol: capability.protocol });
        } catch {
          // the extension's respond threw: nothing of ours to undo
        }
      }
    }),
    pi.events.on(REPORT_TOPIC, (/** @type {unknown} */ payload) => {
      if (state === "open") bus.emit(REPORT_TOPIC, payload);
      else if (state === "early" && early.length < MAX_UNANSWERED) early.push(payload);
    }),
  ];
  const stop = () => {
    state = "done";
    early.length = 0;
    for (const off of offs.splice(0)) {
      try {
        off();
      } catch {
        // an ended session's unsubscribe
      }
    }
  };

  pi.on("session_start", async (/** @type {any} */ _event, /** @type {any} */ ctx) => {
    if (state !== "early") return;
    try {
      child = await hostFor(pi).open(`/root/${childName(ctx, pi)}-${n}`);
      if (!(await child.attach(bus))) child = null;
    } catch {
      child = null;
    }
    if (!child) {
      stop();
      return;
    }
    state = "open";
    for (const payload of early.splice(0)) bus.emit(REPORT_TOPIC, payload);
  });

  pi.on("session_shutdown", () => {
    afterShutdown(pi, async () => {
      const c = child;
      stop();
      await c?.close();
    }, { bound: CLOSE_AFTER });
  });
}
