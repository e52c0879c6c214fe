// The child extension: what PiChild.args (`-e <this file>`) loads first in
// a child `pi`. When hosted it bridges pi.events to the service before the
// other extensions' factories run (pi awaits each factory in load order,
// and -e extensions load first). When not hosted (no or stale variables,
// serve gone or stalled) it installs nothing, prints nothing, throws
// nothing. It closes the bridge only after every extension's
// session_shutdown handlers have run (lib/pi.js afterShutdown), bounded by
// the bridge's close (2 s), and an idle bridge never holds the process.
// SPEC §11.3; docs/pi.md.

import { bridgeChildBus } from "../lib/bridge.js";
import { afterShutdown, hostedChild, registry } from "../lib/pi.js";

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
  const me = { bridge, pi, path: bridge.session?.path, poll: null };
  reg.child = me;
  pi.on("session_shutdown", () => {
    afterShutdown(pi, async () => {
      if (me.poll) clearInterval(me.poll);
      if (reg.child === me) reg.child = null;
      await bridge.close();
    });
  });
}
