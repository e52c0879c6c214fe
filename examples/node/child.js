#!/usr/bin/env node
// A diagrelay child client in plain JavaScript: Node's `net` module, no
// dependencies. It does what `diagrelay report` does, over the same
// protocol (docs/protocol.md): one JSON-RPC 2.0 object per line on the Unix socket.
//
//   node child.js LEVEL MESSAGE [SOURCE]
//
// Environment: DIAGRELAY_SOCKET (the socket path) and DIAGRELAY_TOKEN (this
// child's token, from the host's runtime.open).
// Exit: 0 the service took the report (policy drops are not revealed),
//       1 no compatible host, or the service refused the report,
//       2 usage error.
"use strict";

const net = require("node:net");

const MIN_VERSION = "1.1.0"; // the first release with child diagnostics
const TIMEOUT_MS = 30000;

function fail(code, msg) {
  process.stderr.write(`child.js: ${msg}\n`);
  process.exit(code);
}

// parseVersion returns [major, minor, patch, prerelease ids] or null.
function parseVersion(v) {
  const m = /^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/.exec(v);
  if (!m) return null;
  return [Number(m[1]), Number(m[2]), Number(m[3]), m[4] ? m[4].split(".") : []];
}

// compareVersions orders two parsed versions as semantic versioning does.
function compareVersions(a, b) {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  const pa = a[3], pb = b[3];
  if (pa.length === 0 || pb.length === 0) return pb.length - pa.length; // a release beats its prereleases
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const na = /^\d+$/.test(pa[i]), nb = /^\d+$/.test(pb[i]);
    if (na && nb && Number(pa[i]) !== Number(pb[i])) return Number(pa[i]) < Number(pb[i]) ? -1 : 1;
    if (na !== nb) return na ? -1 : 1; // numeric identifiers sort first
    if (pa[i] !== pb[i]) return pa[i] < pb[i] ? -1 : 1;
  }
  return pa.length - pb.length;
}

// connect opens the socket and returns call(method, params) -> Promise of
// the result; an error reply rejects with the server's message and code.
function connect(path) {
  return new Promise((resolve, reject) => {
    const sock = net.createConnection(path);
    const pending = new Map();
    let nextID = 0;
    let buf = "";
    const failAll = (err) => {
      for (const p of pending.values()) p.reject(err);
      pending.clear();
    };
    sock.setEncoding("utf8");
    sock.setTimeout(TIMEOUT_MS, () => sock.destroy(new Error("no reply in time")));
    sock.on("error", (err) => { failAll(err); reject(err); });
    sock.on("close", () => failAll(new Error("the service closed the connection")));
    sock.on("data", (chunk) => {
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let msg;
        try { msg = JSON.parse(line); } catch { sock.destroy(new Error("bad reply: " + line)); return; }
        if (msg.id === undefined || msg.id === null) {
          if (msg.error) failAll(new Error(`${msg.error.message} (${msg.error.code})`));
          continue; // a notification
        }
        const p = pending.get(msg.id);
        if (!p) continue;
        pending.delete(msg.id);
        if (msg.error) p.reject(new Error(`${msg.error.message} (${msg.error.code})`));
        else p.resolve(msg.result);
      }
    });
    sock.on("connect", () => {
      resolve({
        call(method, params) {
          const id = ++nextID;
          return new Promise((res, rej) => {
            pending.set(id, { resolve: res, reject: rej });
            sock.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
          });
        },
        close() { sock.end(); },
      });
    });
  });
}

async function main() {
  const [level, message, source] = process.argv.slice(2);
  if (!level || message === undefined || process.argv.length > 5) {
    fail(2, "usage: node child.js info|warning|error MESSAGE [SOURCE]");
  }
  const path = process.env.DIAGRELAY_SOCKET, token = process.env.DIAGRELAY_TOKEN;
  if (!path || !token) fail(1, "not hosted: DIAGRELAY_SOCKET and DIAGRELAY_TOKEN must both be set");

  let rpc;
  try {
    rpc = await connect(path);
    await rpc.call("session.hello", { token });
  } catch (err) {
    fail(1, `not hosted: ${err.message}`);
  }
  let cap;
  try {
    cap = await rpc.call("diagnostic.probe");
  } catch (err) {
    fail(1, `not hosted: ${err.message}`);
  }
  const v = cap && typeof cap.version === "string" ? parseVersion(cap.version) : null;
  if (!cap || cap.protocol !== 1 || !v || compareVersions(v, parseVersion(MIN_VERSION)) < 0) {
    fail(1, `not hosted: incompatible host ${JSON.stringify(cap)} (want protocol 1, version >= ${MIN_VERSION})`);
  }
  const params = { level, message };
  if (source !== undefined && source !== "") params.source = source;
  try {
    await rpc.call("diagnostic.report", params);
  } catch (err) {
    fail(1, `report refused: ${err.message}`);
  }
  rpc.close();
  process.stdout.write(`reported to diagrelay ${cap.version} (protocol ${cap.protocol})\n`);
}

main().catch((err) => fail(1, err.message));
