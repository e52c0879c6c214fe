// Host.start with neither data nor socket runs the service on a private
// data directory: removed when the service stops, exits on its own, or
// when the host process exits without stopping it.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { Host } from "../index.js";
import { diagrelayBin, repoRoot, waitFor } from "./helpers.js";

const exec = promisify(execFile);
const T = { timeout: 20_000 };

function freshTmp(t) {
  const dir = fs.mkdtempSync("/tmp/drjs-tmp-");
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// tmpdirFor makes os.tmpdir() a fresh directory for test t.
function tmpdirFor(t) {
  const tmp = freshTmp(t);
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
  t.after(() => (saved === undefined ? delete process.env.TMPDIR : (process.env.TMPDIR = saved)));
  return tmp;
}

test("a private data directory is removed by stop", T, async (t) => {
  const tmp = tmpdirFor(t);
  const host = await Host.start({ bin: diagrelayBin() });
  assert.equal(path.dirname(host.data), tmp);
  assert.equal(host.socket, path.join(host.data, "s"));
  assert.ok(fs.existsSync(path.join(host.data, "host.token")));
  await host.open("/root/a");
  await host.stop();
  assert.deepEqual(fs.readdirSync(tmp), []);
});

test("a private data directory is removed when the service dies", T, async (t) => {
  const tmp = tmpdirFor(t);
  const host = await Host.start({ bin: diagrelayBin() });
  process.kill(host.pid, "SIGKILL");
  await waitFor(() => fs.readdirSync(tmp).length === 0, 5000, "the directory removed");
});

test("a host process that exits without stop leaves no directory", T, async (t) => {
  const tmp = freshTmp(t);
  const script = `
    import { Host } from ${JSON.stringify(path.join(repoRoot, "clients/js/index.js"))};
    const host = await Host.start({ bin: ${JSON.stringify(diagrelayBin())} });
    console.log(host.data);
    process.exit(0);`;
  const { stdout } = await exec(process.execPath, ["--input-type=module", "-e", script], { env: { ...process.env, TMPDIR: tmp } });
  assert.equal(path.dirname(stdout.trim()), tmp);
  assert.deepEqual(fs.readdirSync(tmp), []);
});
