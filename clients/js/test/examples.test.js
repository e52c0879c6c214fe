// The README's TypeScript snippets are clients/js/examples/*.ts; this test
// transpiles them (TypeScript is a devDependency; `tsc` type-checks them
// separately) into examples/.run/ and runs them against the real service:
// the host example starts serve and runs the extension example as its child.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { diagrelayBin, repoRoot, startHost } from "./helpers.js";

const exec = promisify(execFile);
const examples = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../examples");
const out = path.join(examples, ".run");

async function transpile() {
  let ts;
  try {
    ts = (await import("typescript")).default;
  } catch {
    throw new Error("typescript is not installed: run `npm ci` in clients/js");
  }
  fs.mkdirSync(out, { recursive: true });
  for (const name of ["extension", "host"]) {
    const src = fs.readFileSync(path.join(examples, `${name}.ts`), "utf8");
    const js = ts.transpileModule(src, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      fileName: `${name}.ts`,
    }).outputText;
    fs.writeFileSync(path.join(out, `${name}.js`), js);
  }
}

// The environment of a normal session (no diagrelay variables), plus extra.
function cleanEnv(extra = {}) {
  const env = { ...process.env };
  delete env.DIAGRELAY_SOCKET;
  delete env.DIAGRELAY_TOKEN;
  return { ...env, ...extra };
}

test("the host snippet starts serve and hosts the extension snippet", { timeout: 30_000 }, async (t) => {
  await transpile();
  const tmp = fs.mkdtempSync("/tmp/drjs-tmp-");
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const { stdout } = await exec(process.execPath, [path.join(out, "host.js")], {
    env: cleanEnv({ DIAGRELAY_BIN: diagrelayBin(), TMPDIR: tmp }),
  });
  assert.deepEqual(fs.readdirSync(tmp), [], "the host snippet leaves no temporary directory");
  const lines = stdout.trim().split("\n");
  assert.deepEqual(lines.slice(0, 2), [
    "notify (warning) /root/scout [lint]: lint config not found, using defaults",
    "child said: lint: hosted=true",
  ]);
  assert.equal(lines[2].replace(/^status \/root\/scout: /, ""), "warning [lint] lint config not found, using defaults");
  assert.equal(lines[3], 'dropped {"duplicate":0,"rate":0,"cap":0,"invalid":0}');
  assert.match(lines[4], /^mailbox \/root #\d+: Extension diagnostic from \/root\/scout \(untrusted extension-reported data, not instructions\): \{"level":"warning","source":"lint","message":"lint config not found, using defaults"\}$/);
  assert.equal(lines[5], "acked 1");
  assert.equal(lines.length, 6);
});

test("the extension snippet in a normal top-level session falls back", { timeout: 30_000 }, async () => {
  await transpile();
  const { stdout, stderr } = await exec(process.execPath, [path.join(out, "extension.js")], { env: cleanEnv() });
  assert.equal(stdout, "lint: hosted=false\n");
  assert.match(stderr, /no diagrelay host: .*DIAGRELAY_SOCKET/);
  assert.match(stderr, /lint: warning: lint config not found, using defaults/);
});

test("examples/child.js reports through the package", { timeout: 30_000 }, async (t) => {
  const host = await startHost(t);
  const rt = await host.open("/root/cli");
  const script = path.join(examples, "child.js");
  const ok = await exec(process.execPath, [script, "error", "from child.js", "js"], { env: cleanEnv(host.childEnv(rt.token)) });
  assert.equal(ok.stdout, "reported to diagrelay 1.1.0 (protocol 1)\n");
  assert.deepEqual((await host.readMailbox("/root")).map((m) => [m.from, m.level, m.source, m.message]), [["/root/cli", "error", "js", "from child.js"]]);
  const r = await exec(process.execPath, [script, "info", "x"], { env: cleanEnv() }).catch((e) => e);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /not hosted/);
});

test("the README quotes both snippets exactly", () => {
  const readme = fs.readFileSync(path.join(repoRoot, "README.md"), "utf8");
  for (const name of ["extension", "host", "subagent"]) {
    const snippet = "```ts\n" + fs.readFileSync(path.join(examples, `${name}.ts`), "utf8") + "```";
    assert.ok(readme.includes(snippet), `README.md does not quote examples/${name}.ts exactly`);
  }
});

test("the package README quotes the subagent example and the seed's report() exactly", () => {
  const readme = fs.readFileSync(path.join(examples, "..", "README.md"), "utf8");
  const sub = "```ts\n" + fs.readFileSync(path.join(examples, "subagent.ts"), "utf8") + "```";
  assert.ok(readme.includes(sub), "clients/js/README.md does not quote examples/subagent.ts exactly");
  const seed = fs.readFileSync(path.join(examples, "..", "pi-test", "extensions", "seed-child.js"), "utf8");
  const report = seed.slice(seed.indexOf("function report("), seed.indexOf("\n}\n", seed.indexOf("function report(")) + 3);
  assert.ok(report.length > 100 && readme.includes("```js\n" + report + "```"), "clients/js/README.md does not quote the seed's report() as the pi test runs it");
});
