#!/usr/bin/env node
// A diagrelay child in JavaScript, built on the npm package `diagrelay`
// (clients/js in this repository). It does what `diagrelay report` does.
//
//   node child.js LEVEL MESSAGE [SOURCE]
//
// Environment: DIAGRELAY_SOCKET (the socket path) and DIAGRELAY_TOKEN (this
// child's token, from the host's runtime.open).
// Exit: 0 the service took the report (policy drops are not revealed),
//       1 no compatible host, or the service refused the report,
//       2 usage error.

// In a project that installed the package: import { connectChild } from "diagrelay";
import { connectChild, MIN_VERSION } from "../index.js";

function fail(code, msg) {
  process.stderr.write(`child.js: ${msg}\n`);
  process.exit(code);
}

const [level, message, source] = process.argv.slice(2);
if (!level || message === undefined || process.argv.length > 5) {
  fail(2, "usage: node child.js info|warning|error MESSAGE [SOURCE]");
}

let child;
try {
  child = await connectChild(); // DIAGRELAY_SOCKET, DIAGRELAY_TOKEN
} catch (err) {
  fail(1, `not hosted: ${err.message}`);
}
let cap;
try {
  cap = await child.probe(MIN_VERSION); // protocol 1, version >= 1.1.0, or null
} catch (err) {
  fail(1, `not hosted: ${err.message}`);
}
if (!cap) {
  fail(1, `not hosted: incompatible host ${JSON.stringify(child.capability ?? null)} (want protocol 1, version >= ${MIN_VERSION})`);
}
try {
  await child.report(level, message, source === "" ? undefined : source);
} catch (err) {
  fail(1, `report refused: ${err.message}`);
}
await child.close();
process.stdout.write(`reported to diagrelay ${cap.version} (protocol ${cap.protocol})\n`);
