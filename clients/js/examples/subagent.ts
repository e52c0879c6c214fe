// A subagent extension for pi: each child pi it runs is hosted by diagrelay,
// found on the session's bus, so it needs no import (the type import is
// erased) and works from ~/.pi/agent/extensions/ with nothing beside it.
import type { HostProbeRequest, PiHost } from "diagrelay/pi";

type Ctx = { ui: { notify(message: string, type?: "info" | "warning" | "error"): void } };
type Pi = {
  events: { emit(topic: string, data: unknown): void };
  registerCommand(name: string, command: { description: string; handler: (args: string, ctx: Ctx) => Promise<void> }): void;
};

export default function subagent(pi: Pi) {
  pi.registerCommand("scout", {
    description: "Run a scout subagent on a task",
    handler: async (task, ctx) => {
      let host = undefined as PiHost | undefined;
      const probe: HostProbeRequest = { respond: (h) => (host = h) };
      pi.events.emit("diagrelay:host:probe", probe);
      if (!host) return ctx.ui.notify("scout: diagrelay is not installed (pi install ./clients/js)", "warning");
      // The child pi: stdin ignored, output captured, its thread closed after it.
      const r = await host.run("/root/scout", ["-p", "--no-session", task]);
      const said = r.code === 0 ? r.stdout.trim() : `failed (${r.code ?? r.signal}): ${r.stderr.trim()}`;
      ctx.ui.notify(`scout: ${said} (${r.status?.diagnostics.length ?? 0} diagnostics)`, r.code === 0 ? "info" : "error");
    },
  });
}
