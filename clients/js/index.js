// diagrelay: bridge a pi child session's event bus to `diagrelay serve`, and
// drive the service as a host. Node 20+, no runtime dependencies. The wire
// contract is docs/protocol.md in the diagrelay repository.
export { bridgeChildBus, Bridge, PROBE_TOPIC, REPORT_TOPIC, MAX_UNANSWERED, CLOSE_TIMEOUT } from "./lib/bridge.js";
export { findBinary } from "./lib/bin.js";
export { connectChild, Child, MIN_VERSION } from "./lib/child.js";
export { Host } from "./lib/host.js";
export { RPCError } from "./lib/rpc.js";
export { MAX_FRAME } from "./lib/fit.js";
