// The child extension: what PiChild.args (`-e <this file>`) loads first in
// a child `pi`. When hosted it bridges pi.events to the service before the
// other extensions' factories run (pi awaits each factory in load order,
// and -e extensions load first), answers the host probe (so the child can
// host children of its own), and gives its own thread's mailbox to its
// agent. When not hosted (no or stale variables, serve gone or stalled) it
// installs nothing, prints nothing, throws nothing. It closes the bridge only
// after every extension's session_shutdown handlers have run, bounded by the
// bridge's close (2 s), and an idle bridge never holds the process.
// docs/pi.md ("The child extension").

import { bridgeChildBus } from "../lib/bridge.js";
import { beforePrompt } from "../lib/pi-deliver.js";
import { answerHostProbe } from "../lib/pi-host.js";
import { afterShutdown, hostedChild, newBox, registry } from "../lib/pi-registry.js";

/** @param {any} pi */
export default async function diagrelayChild(pi) {
  if (!hostedChild() || !process.env.DIAGRELAY_SOCKET) return;
  let bridge = null;
  try {
    bridge = await bridgeChildBus(pi.events, { optional: true });
  } catch {
    return; // a fault of the host is not the child's: the session starts normally
  }
  if (!bridge) return;
  bridge.on("error", () => {}); // silent: a lost host only means "not hosted" from now on
  const reg = registry();
  /** @type {import("../lib/pi-registry.js").HostedChild} */
  const me = { bridge, pi, path: bridge.session?.path, poll: null, box: newBox() };
  reg.child = me;
  const unprobe = answerHostProbe(pi.events, pi);
  pi.on("context", (/** @type {any} */ event) => beforePrompt(event));
  pi.on("session_shutdown", () => {
    afterShutdown(pi, async () => {
      if (me.poll) clearInterval(me.poll);
      if (reg.child === me) reg.child = null;
      try {
        unprobe();
      } catch {
        // pi's unsubscribe of an ended session
      }
      await bridge.close();
    });
  });
}
