// A loopback stand-in for an OpenAI-compatible model endpoint, so the tests
// drive the real pi with no model call leaving the machine. It records every
// request body and answers each with one short streamed reply; a test can
// hold a reply (hold(marker)) to act while the asking pi waits for it.

import http from "node:http";

/**
 * startFakeModel listens on 127.0.0.1 (a free port) and resolves with
 * {url, requests, hold, close}. requests: [{at, body, text}] where text is
 * every message content joined, for searching.
 */
export async function startFakeModel() {
  /** @type {{at: number, body: any, text: string}[]} */
  const requests = [];
  /** @type {Map<string, (req: any) => Promise<void>>} */
  const holds = new Map();
  /** @type {Map<string, {name: string, args: unknown}>} */
  const tools = new Map();
  const server = http.createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (c) => (raw += c));
    req.on("end", async () => {
      let body = null;
      try {
        body = JSON.parse(raw);
      } catch {
        // recorded as it came
      }
      const text = JSON.stringify(body?.messages ?? raw);
      const entry = { at: Date.now(), body, text, url: req.url };
      requests.push(entry);
      if (!req.url?.endsWith("/chat/completions")) {
        res.writeHead(404).end();
        return;
      }
      for (const [marker, fn] of holds) {
        if (text.includes(marker)) {
          holds.delete(marker);
          await fn(entry);
          break;
        }
      }
      const reply = /REPLY:(\w[\w-]*)/.exec(lastUserText(body))?.[1] ?? "ok";
      entry.repliedAt = Date.now();
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      const chunk = (delta, finish) =>
        `data: ${JSON.stringify({ id: "fake-1", object: "chat.completion.chunk", created: 0, model: body?.model ?? "fake", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      // A tool call asked for by a marker in the last message, if it is the user's.
      const last = body?.messages?.at(-1);
      const call = last?.role === "user" ? [...tools].find(([marker]) => lastUserText(body).includes(marker)) : undefined;
      if (call) {
        tools.delete(call[0]);
        entry.toolCall = call[1].name;
        const fn = { name: call[1].name, arguments: JSON.stringify(call[1].args) };
        res.write(chunk({ role: "assistant", content: null, tool_calls: [{ index: 0, id: `call_${requests.length}`, type: "function", function: fn }] }, null));
        res.write(chunk({}, "tool_calls"));
      } else {
        res.write(chunk({ role: "assistant", content: reply }, null));
        res.write(chunk({}, "stop"));
      }
      res.write(`data: ${JSON.stringify({ id: "fake-1", object: "chat.completion.chunk", created: 0, model: body?.model ?? "fake", choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } })}\n\n`);
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    /** hold runs fn before answering the first request whose messages contain marker. */
    hold(marker, fn) {
      holds.set(marker, fn);
    },
    /** toolCall answers the first user message containing marker with a call of tool name with args. */
    toolCall(marker, name, args) {
      tools.set(marker, { name, args });
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

function lastUserText(body) {
  const users = (body?.messages ?? []).filter((m) => m.role === "user");
  const c = users.at(-1)?.content;
  return typeof c === "string" ? c : JSON.stringify(c ?? "");
}
