// A small stand-in for a subagent package, as its author would write it with
// diagrelay/pi: it opens a child runtime and runs a child `pi -p` with
// child.args and child.env, or an in-process child through attach. The
// tests drive it with commands and read its results from notify frames
// ("standin {json}"). Loaded in a child with NESTED_LEAF set, it opens a
// grandchild the same way at session_start.

import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { hostFor } from "diagrelay/pi";

const here = path.dirname(fileURLToPath(import.meta.url));
const SEED = path.join(here, "seed-child.js");
// The pi under test (harness.js PI_ROOT): this package's or DIAGRELAY_PI_ROOT's.
const ROOT = process.env.DIAGRELAY_PI_ROOT ? path.resolve(process.env.DIAGRELAY_PI_ROOT) : path.join(here, "..");
const PI = path.join(ROOT, "node_modules", ".bin", "pi");
/** pi's SDK, of whichever name the pi under test has. */
async function piSDK() {
  for (const name of ["@earendil-works/pi-coding-agent", "@mariozechner/pi-coding-agent"]) {
    const dir = path.join(ROOT, "node_modules", ...name.split("/"));
    if (fs.existsSync(path.join(dir, "package.json"))) return import(pathToFileURL(path.join(dir, "dist", "index.js")).href);
  }
  throw new Error(`no pi package under ${ROOT}`);
}

function runChild(child, extraArgs, task, extraEnv = {}) {
  const started = Date.now();
  return new Promise((resolve) => {
    const env = { ...process.env, ...child.env, ...extraEnv };
    delete env.NESTED_LEAF;
    if (extraEnv.NESTED_LEAF) env.NESTED_LEAF = extraEnv.NESTED_LEAF;
    const p = spawn(PI, [...child.args, "-e", SEED, ...extraArgs, "-p", "--no-session", task], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "", stderr = "";
    p.stdout.on("data", (c) => (stdout += c));
    p.stderr.on("data", (c) => (stderr += c));
    p.on("exit", (code, signal) => resolve({ path: child.path, socket: child.env.DIAGRELAY_SOCKET, pid: p.pid, code, signal, started, exitAt: Date.now(), stdout, stderr }));
  });
}

export default function subagent(pi) {
  const children = new Map();
  const say = (ctx, kind, data) => ctx.ui.notify(`${kind} ${JSON.stringify(data)}`, "info");

  pi.registerCommand("spawn", {
    description: "spawn PATH [flood|nested]: run a child pi -p",
    handler: async (args, ctx) => {
      const [threadPath, how] = args.trim().split(/\s+/);
      const child = await hostFor(pi).open(threadPath);
      children.set(threadPath, child);
      const extraEnv = how === "flood" ? { SEED_FLOOD: "1" } : how === "nested" ? { NESTED_LEAF: `${threadPath}/leaf` } : {};
      const extraArgs = how === "nested" ? ["-e", fileURLToPath(import.meta.url)] : [];
      const name = threadPath.split("/").pop();
      // Not awaited: the test acts on the serve while the child runs.
      runChild(child, extraArgs, `CHILD TASK ${threadPath} REPLY:done-${name}`, extraEnv).then((r) => say(ctx, "standin", r));
    },
  });

  pi.registerCommand("status", {
    description: "status PATH: the child's thread status",
    handler: async (args, ctx) => {
      const child = children.get(args.trim());
      say(ctx, "standin-status", child ? await child.status() : null);
    },
  });

  pi.registerCommand("doreload", {
    description: "doreload: reload the extensions, as /reload does",
    handler: async (_args, ctx) => {
      await ctx.reload();
    },
  });

  pi.registerCommand("probes", {
    description: "probes: how many answer the host probe on this session's bus",
    handler: async (_args, ctx) => {
      let answers = 0;
      pi.events.emit("diagrelay:host:probe", { respond: (h) => { if (typeof h?.run === "function" && h.protocol === 1) answers++; } });
      say(ctx, "standin-probes", { path: "probes", answers });
    },
  });

  pi.registerCommand("runp", {
    description: "runp PATH: hostFor(pi).run a child pi -p, its result on stderr",
    handler: async (args) => {
      const threadPath = args.trim();
      const name = threadPath.split("/").pop();
      const r = await hostFor(pi).run(threadPath, ["-e", SEED, "-p", "--no-session", `CHILD TASK ${threadPath} REPLY:done-${name}`]);
      process.stderr.write(`runp ${JSON.stringify(r)}\n`);
    },
  });

  pi.registerCommand("inproc", {
    description: "inproc PATH: an in-process child session (pi's SDK) bridged with attach",
    handler: async (args, ctx) => {
      const threadPath = args.trim();
      try {
        await inproc(threadPath, ctx);
      } catch (err) {
        say(ctx, "standin-inproc", { path: threadPath, error: String(err?.stack ?? err) });
      }
    },
  });

  async function inproc(threadPath, ctx) {
      const sdk = await piSDK();
      const seed = (await import(SEED)).default;
      const child = await hostFor(pi).open(threadPath);
      const eventBus = sdk.createEventBus();
      const bridge = await child.attach(eventBus);
      const agentDir = sdk.getAgentDir();
      const loader = new sdk.DefaultResourceLoader({ cwd: ctx.cwd, agentDir, eventBus, noExtensions: true, noSkills: true, noPromptTemplates: true, noThemes: true, noContextFiles: true, extensionFactories: [seed] });
      await loader.reload();
      const { session } = await sdk.createAgentSession({ cwd: ctx.cwd, agentDir, resourceLoader: loader, sessionManager: sdk.SessionManager.inMemory() });
      await bridge.flush();
      session.dispose();
      await child.close();
      say(ctx, "standin-inproc", { path: threadPath, dropped: bridge.dropped, unanswered: bridge.unanswered });
  }

  // In a hosted child: open a grandchild at session_start, the way the
  // parent opened this child, and give its reports time to reach this
  // child's agent (within 3 s, docs/pi.md) before the child's own prompt.
  if (process.env.NESTED_LEAF) {
    const leaf = process.env.NESTED_LEAF;
    pi.on("session_start", async () => {
      const child = await hostFor(pi).open(leaf);
      const r = await runChild(child, [], `CHILD TASK ${leaf} REPLY:done-leaf`);
      process.stderr.write(`nested ${JSON.stringify({ code: r.code, stdout: r.stdout, stderr: r.stderr })}\n`);
      await new Promise((resolve) => setTimeout(resolve, 3000));
    });
  }
}
