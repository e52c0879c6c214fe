// The parent extension: what `pi install` of the package loads (the `pi`
// manifest in package.json). In a top-level pi session with a UI it owns
// the one Host of the process (lib/pi-host.js), forwards every notification
// to ctx.ui.notify, gives the agent every mailbox message for /root as a
// non-waking message placed before the prompt it came ahead of, answers
// the host probe on the session's bus, and adds /diagrelay. In a hosted
// child (DIAGRELAY_TOKEN set), where `pi install` loads it too, it does
// nothing: the child extension (pi/child.js) is that process's diagrelay.
// In a session with no UI (pi -p by hand) it claims nothing, so no Host
// starts whose notifications nobody would see. docs/pi.md.

import { beforePrompt } from "../lib/pi-deliver.js";
import { answerHostProbe, runningHost, startRootHost, stopRootHost } from "../lib/pi-host.js";
import { afterShutdown, hostedChild, isStale, registry, sessionDataDir } from "../lib/pi-registry.js";
import { spawnedParent } from "../lib/pi-spawn.js";
import diagrelaySpawned from "./spawned.js";

/** @param {any} pi */
export default function diagrelayParent(pi) {
  if (hostedChild()) return;
  // Started below a parent pi with no diagrelay code in between: a child (pi/spawned.js).
  if (spawnedParent()) return diagrelaySpawned(pi);
  const claim = {};
  const reg = registry();
  // Asked on this session's bus only: an in-process child session has a bus of its own.
  /** @type {(() => void) | null} */
  let unprobe = answerHostProbe(pi.events, pi);
  pi.on("context", (/** @type {any} */ event) => (reg.parent?.claim === claim ? beforePrompt(event) : undefined));

  pi.on("session_start", async (/** @type {any} */ _event, /** @type {any} */ ctx) => {
    unprobe ??= answerHostProbe(pi.events, pi); // a pi that keeps this instance for the next session
    if (!ctx.hasUI) return; // no UI: nobody would hear this Host (pi -p by hand)
    // One Host per process: an in-process child session (pi's SDK) loads
    // this extension too, while the parent session holds the claim.
    if (reg.parent) {
      if (!reg.parent.ending && !isStale(reg.parent.pi)) return;
      reg.parent = null; // the session before a /new, /resume or /reload, not yet stopped
      await stopRootHost();
    }
    const where = sessionDataDir(ctx.sessionManager?.getSessionFile?.());
    reg.parent = { claim, pi, ui: ctx.ui, data: where.data, temporary: where.temporary };
    // Start now: the Host puts DIAGRELAY_PARENT into this process's
    // environment (lib/pi-spawn.js), so that a child any package starts
    // reports; and a resumed session's unacknowledged messages reach the
    // agent before the next prompt.
    await startRootHost();
  });

  pi.on("session_shutdown", () => {
    // pi may keep the bus across a /reload: the new instance answers from now on.
    try {
      unprobe?.();
    } catch {
      // an ended session's unsubscribe
    }
    unprobe = null;
    if (reg.parent?.claim !== claim) return;
    // The session that replaces this one (/reload, /new, /resume) takes
    // over at its session_start; pi 0.73 leaves the old API usable, so
    // "ending" says it, not staleness alone.
    reg.parent.ending = true;
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
    handler: async (/** @type {string} */ _args, /** @type {any} */ ctx) => {
      const host = runningHost();
      if (!host || reg.parent?.claim !== claim) {
        ctx.ui.notify("diagrelay: no child opened in this session", "info");
        return;
      }
      let threads;
      try {
        threads = await (await host).threads();
      } catch (err) {
        ctx.ui.notify(`diagrelay: the service is gone (${/** @type {Error} */ (err).message})`, "warning");
        return;
      }
      const lines = threads.map((t) => {
        const d = /** @type {any} */ (t.dropped ?? {});
        return `${t.path}${t.open ? "" : " (closed)"}: ${t.diagnostics} diagnostics; dropped duplicate ${d.duplicate ?? 0}, rate ${d.rate ?? 0}, cap ${d.cap ?? 0}, invalid ${d.invalid ?? 0}`;
      });
      ctx.ui.notify(lines.length ? `diagrelay threads:\n${lines.join("\n")}` : "diagrelay: no threads", "info");
    },
  });
}
