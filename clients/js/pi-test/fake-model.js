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
      res.write(chunk({ role: "assistant", content: reply }, null));
      res.write(chunk({}, "stop"));
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
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

function lastUserText(body) {
  const users = (body?.messages ?? []).filter((m) => m.role === "user");
  const c = users.at(-1)?.content;
  return typeof c === "string" ? c : JSON.stringify(c ?? "");
}
