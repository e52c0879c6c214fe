// The parent extension: what `pi install npm:diagrelay` loads (the `pi`
// manifest in package.json). In a top-level pi session it owns the one
// Host of the process (lib/pi.js), forwards every notification to
// ctx.ui.notify, gives the agent every mailbox message for /root as a
// non-waking message, and adds /diagrelay. In a hosted child
// (DIAGRELAY_TOKEN set), where `pi install` loads it too, it does nothing:
// the child extension (pi/child.js) is that process's diagrelay.
// SPEC §11.3; docs/pi.md.

import fs from "node:fs";
import path from "node:path";
import { afterShutdown, hostedChild, isStale, registry, runningHost, sessionDataDir, startRootHostIfResumed, stopRootHost } from "../lib/pi.js";

/** @param {any} pi */
export default function diagrelayParent(pi) {
  if (hostedChild()) return;
  const claim = {};
  const reg = registry();

  pi.on("session_start", async (_event, ctx) => {
    // One Host per process: an in-process child session (pi's SDK) loads
    // this extension too, while the parent session holds the claim.
    if (reg.parent) {
      if (!isStale(reg.parent.pi)) return;
      reg.parent = null; // the session before a /new or /resume, not yet stopped
      await stopRootHost();
    }
    const where = sessionDataDir(ctx.sessionManager?.getSessionFile?.());
    reg.parent = { claim, pi, ui: ctx.hasUI ? ctx.ui : null, data: where.data, temporary: where.temporary, mode: ctx.hasUI ? "rpc" : "print" };
    // A resumed session's data directory holds a mailbox: start now, so its
    // unacknowledged messages reach the agent before the next prompt.
    if (where.data && fs.existsSync(path.join(where.data, "mailbox.db"))) await startRootHostIfResumed(pi);
  });

  pi.on("session_shutdown", () => {
    if (reg.parent?.claim !== claim) return;
    // Subagent extensions load after this one and may close their children
    // in their own shutdown handlers: stop the Host after all of them.
    afterShutdown(pi, async () => {
      if (reg.parent?.claim !== claim) return;
      reg.parent = null;
      await stopRootHost();
    });
  });

  pi.registerCommand("diagrelay", {
    description: "Show diagrelay's child threads and their drop counts",
    handler: async (_args, ctx) => {
      const host = runningHost();
      if (!host || reg.parent?.claim !== claim) {
        ctx.ui.notify("diagrelay: no child opened in this session", "info");
        return;
      }
      const threads = await (await host).threads();
      const lines = threads.map((t) => {
        const d = t.dropped ?? {};
        return `${t.path}${t.open ? "" : " (closed)"}: ${t.diagnostics} diagnostics; dropped duplicate ${d.duplicate ?? 0}, rate ${d.rate ?? 0}, cap ${d.cap ?? 0}, invalid ${d.invalid ?? 0}`;
      });
      ctx.ui.notify(lines.length ? `diagrelay threads:\n${lines.join("\n")}` : "diagrelay: no threads", "info");
    },
  });
}
