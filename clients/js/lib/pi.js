// diagrelay/pi: the Host of a pi process for subagent extensions running in
// it (hostFor, PiChild, the host probe's topic) and the extensions' paths.
// The rest of the pi support is internal (lib/pi-*.js). docs/pi.md.

import { fileURLToPath } from "node:url";

export { CHILD_EXTENSION, HOST_PROBE_TOPIC, VERSION, PiChild, hostFor } from "./pi-host.js";
export { MESSAGE_TYPE } from "./pi-deliver.js";

/** The absolute path of the extension for in-process children (pi-subagents' defaultExtensions). */
export const INPROC_EXTENSION = fileURLToPath(new URL("../pi/inproc.js", import.meta.url));
