import Fastify from "fastify";
import { consolePlugin } from "oncely/console";
import { memoryJournal } from "oncely/testing";
import { describe, expect, it } from "vitest";

// The console's live updates: server-sent events on /api/live, behind the token like every other
// view, naming the topics whose pages changed after a commit, instead of every page polling.

const TOKEN = "live-console-token-0123456789";

describe("the console's live feed", () => {
  it("streams text/event-stream behind the token, naming the topics a commit changed", async () => {
    const journal = memoryJournal();
    const app = Fastify({ logger: false });
    await app.register(consolePlugin, { prefix: "/console", journal, token: TOKEN, pollMs: 20 });
    const url = await app.listen({ port: 0, host: "127.0.0.1" });
    try {
      expect((await fetch(`${url}/console/api/live`)).status).toBe(401);
      const response = await fetch(`${url}/console/api/live`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
      expect(response.headers.get("content-security-policy")).toContain("script-src 'self'");
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let text = "";
      const until = async (wanted: string) => {
        while (!text.includes(wanted)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`stream ended before ${wanted}: ${text}`);
          text += decoder.decode(value, { stream: true });
        }
      };
      await until(": live");
      // Let the feed take its first look, then change what the dead-letters page shows.
      await new Promise((resolve) => setTimeout(resolve, 100));
      await journal.commit({
        deadLetters: [
          {
            id: "d1",
            consumer: "billing",
            messageId: null,
            payload: {},
            error: "boom",
            stack: null,
            attempts: 1,
            firstFailedAt: 1,
            lastFailedAt: 1,
          },
        ],
        now: 1,
      });
      await until("event: change");
      await until("\n\n");
      const data = /event: change\ndata: (.*)\n\n/.exec(text)?.[1] ?? "{}";
      expect(JSON.parse(data).topics).toEqual(["dead-letters"]);
      await reader.cancel();
    } finally {
      await app.close();
    }
  });
});
