// The binary travels with the package (docs/pi.md, "The binary"): pack the main package
// and the linux-x64 one (built by clients/js/scripts/build-platforms.sh),
// install both tarballs into an empty directory, and start a Host with a
// PATH that has neither go nor diagrelay. Without the platform package the
// error names what was tried. Linux x64 only (the package built here).

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { PACKAGE } from "./harness.js";

const exec = promisify(execFile);
const PLATFORM = path.join(PACKAGE, "npm", "linux-x64");
const skip = process.platform !== "linux" || process.arch !== "x64" ? "the platform package built here is linux-x64" : !fs.existsSync(path.join(PLATFORM, "bin", "diagrelay")) ? "run clients/js/scripts/build-platforms.sh linux-x64 first" : false;

// A PATH with node and nothing else: no go, no diagrelay.
function bareEnv(dir) {
  const bin = path.join(dir, "bin");
  fs.mkdirSync(bin);
  fs.symlinkSync(process.execPath, path.join(bin, "node"));
  const env = { HOME: dir, PATH: bin, TMPDIR: os.tmpdir() };
  return env;
}

const SCRIPT = `
import { Host } from "diagrelay";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
const data = mkdtempSync(join(process.env.TMPDIR, "drpack-"));
try {
  const host = await Host.start({ data, socket: join(data, "s") });
  const rt = await host.open("/root/packed");
  console.log(JSON.stringify({ opened: rt.path, generation: rt.generation, threads: (await host.threads()).map((t) => t.path) }));
  await host.stop();
} catch (err) {
  console.log(JSON.stringify({ error: err.message, code: err.code }));
}
`;

test("the packed main and linux-x64 packages start a Host without go or diagrelay on PATH", { skip, timeout: 180_000 }, async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "drpack-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const tarballs = path.join(dir, "tarballs");
  fs.mkdirSync(tarballs);
  const packed = [];
  for (const pkg of [PACKAGE, PLATFORM]) {
    const { stdout } = await exec("npm", ["pack", "--silent", "--pack-destination", tarballs, pkg], { cwd: dir });
    packed.push(path.join(tarballs, stdout.trim().split("\n").at(-1)));
  }
  const { stdout: list } = await exec("tar", ["-tzf", packed[0]]);
  for (const f of ["package/pi/parent.js", "package/pi/child.js", "package/pi/inproc.js", "package/lib/pi.js", "package/lib/pi-host.js", "package/lib/pi-run.js", "package/lib/pi-deliver.js", "package/lib/pi-registry.js", "package/README.md", "package/LICENSE"]) assert.ok(list.includes(f), `${f} not in the tarball: ${list}`);
  assert.ok(!list.includes("package/pi-test/"), "the test package is in the tarball");
  const app = path.join(dir, "app");
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  await exec("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", ...packed], { cwd: app, timeout: 120_000 });
  assert.ok(fs.existsSync(path.join(app, "node_modules", "@diagrelay", "linux-x64", "bin", "diagrelay")));
  fs.writeFileSync(path.join(app, "start.mjs"), SCRIPT);
  const env = bareEnv(dir);
  await assert.rejects(exec("go", ["version"], { env }), "go is reachable");
  await assert.rejects(exec("diagrelay", ["version"], { env }), "diagrelay is reachable");
  const r = await exec("node", ["start.mjs"], { cwd: app, env, timeout: 60_000 });
  assert.deepEqual(JSON.parse(r.stdout), { opened: "/root/packed", generation: 1, threads: ["/root/packed"] });
  // Without the platform package: the error says what was tried and what to install.
  fs.rmSync(path.join(app, "node_modules", "@diagrelay"), { recursive: true });
  const miss = JSON.parse((await exec("node", ["start.mjs"], { cwd: app, env, timeout: 60_000 })).stdout);
  assert.equal(miss.code, "ERR_DIAGRELAY_NO_BINARY");
  assert.match(miss.error, /bin option.*DIAGRELAY_BIN.*@diagrelay\/linux-x64 is not installed.*PATH.*npm install @diagrelay\/linux-x64/);
});

test("the package versions equal diagrelay version", { skip }, async () => {
  const main = JSON.parse(fs.readFileSync(path.join(PACKAGE, "package.json"), "utf8"));
  const plat = JSON.parse(fs.readFileSync(path.join(PLATFORM, "package.json"), "utf8"));
  const { stdout } = await exec(path.join(PLATFORM, "bin", "diagrelay"), ["version"]);
  const version = stdout.split(" ")[1];
  assert.equal(main.version, version);
  assert.equal(plat.version, version);
  assert.equal(main.optionalDependencies[plat.name], version);
  assert.deepEqual([plat.os, plat.cpu], [["linux"], ["x64"]]);
});
