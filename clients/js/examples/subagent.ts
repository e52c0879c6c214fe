// A subagent extension for pi: each child `pi -p` it runs is hosted by diagrelay.
import { spawn } from "node:child_process";
import { hostFor, type PiLike } from "diagrelay/pi";

type Handler = { description: string; handler: (args: string) => Promise<void> };

export default function subagent(pi: PiLike & { registerCommand(name: string, command: Handler): void }) {
  pi.registerCommand("scout", {
    description: "Run a scout subagent on a task",
    handler: async (task) => {
      const child = await hostFor(pi).open("/root/scout");
      const p = spawn("pi", [...child.args, "-p", "--no-session", task], { env: { ...process.env, ...child.env }, stdio: "inherit" });
      p.on("exit", () => void child.close());
    },
  });
}
