// A spawned child: a pi process that finds DIAGRELAY_PARENT and no
// DIAGRELAY_TOKEN in its environment was started below a parent pi by some
// program with no diagrelay code of its own (pi's example subagent,
// pi-subagents' runner, a script). The package's extension (pi/parent.js)
// hands such a process to this one, which opens the child's own thread
// below the parent's path with the parent's spawn token, named after what
// the child knows (lib/pi-spawn.js childName), and bridges its bus as the
// child extension does. Where anything fails (no serve, a refusal, no
// answer in 2 s) it installs nothing, prints nothing, throws nothing.
// docs/pi.md ("Children with no glue").

import { bridgeChildBus } from "../lib/bridge.js";
import { afterShutdown } from "../lib/pi-registry.js";
import { childName, openSpawned, spawnedParent } from "../lib/pi-spawn.js";

/** @param {any} pi */
export default async function diagrelaySpawned(pi) {
  const parent = spawnedParent();
  if (!parent) return;
  let bridge = null;
  try {
    const opened = await openSpawned(parent, childName());
    bridge = await bridgeChildBus(pi.events, { socket: parent.socket, token: opened.token, optional: true });
  } catch {
    return; // the parent's fault is not the child's: the session starts normally
  }
  if (!bridge) return;
  bridge.on("error", () => {}); // silent: a lost parent only means "not hosted" from now on
  // Its thread closes when this process exits (the service sees the exit);
  // the bridge closes after every other extension's shutdown reports.
  pi.on("session_shutdown", () => {
    afterShutdown(pi, () => bridge.close());
  });
}
