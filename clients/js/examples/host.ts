// A host (the manager, an IDE) in TypeScript: start the service, open a
// child's runtime, run the child with the environment it needs, then read
// the notifications, the status and the parent's mailbox.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Host } from "diagrelay";

// No data directory given: the service gets a private one, removed when it exits.
const host = await Host.start({ mode: "rpc" });
host.on("notify", (n) => console.log(`notify (${n.notifyType}) ${n.message}`));

const scout = await host.open("/root/scout");
const child = fileURLToPath(new URL("./extension.js", import.meta.url));
const run = await promisify(execFile)(process.execPath, [child], {
  env: { ...process.env, ...host.childEnv(scout.token) },
});
process.stdout.write(`child said: ${run.stdout}`);

const status = await host.status("/root/scout");
for (const d of status.diagnostics) console.log(`status ${status.path}: ${d.level} [${d.source}] ${d.message}`);
console.log(`dropped ${JSON.stringify(status.dropped)}`);

const messages = await host.readMailbox("/root");
for (const m of messages) console.log(`mailbox ${m.recipient} #${m.id}: ${m.text}`);
console.log(`acked ${await host.ack("/root", messages.map((m) => m.id))}`);

await host.close("/root/scout");
await host.stop();
