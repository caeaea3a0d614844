import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ProviderUnavailableError, runRequest } from "../../examples/shop/effects/http.js";
import { keepAliveRequest } from "../../examples/shop/effects/keep-alive-client.js";

/** A real local server standing in for a provider: each path answers one way. */
let server: http.Server;
let base: string;
let connections = 0;
const seen: { method: string; key: string | undefined; body: string }[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on("end", () => {
      seen.push({ method: req.method ?? "", key: req.headers["idempotency-key"] as string | undefined, body });
      if (req.url === "/ok") {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ id: "ch_1", echo: JSON.parse(body || "null") }));
      } else if (req.url === "/declined") {
        res.statusCode = 402;
        res.end(JSON.stringify({ reason: "card declined" }));
      } else if (req.url === "/busy") {
        res.statusCode = 503;
        res.setHeader("retry-after", "2");
        res.end("busy");
      } else if (req.url === "/cut") {
        // Promises 100 bytes, sends 10, and closes: the answer never arrives whole.
        res.writeHead(200, { "content-length": "100" });
        res.write('{"id":"ch_');
        setTimeout(() => res.socket?.destroy(), 5);
      } else if (req.url === "/hang") {
        // Never answers: only the caller's signal ends the call.
      }
    });
  });
  server.on("connection", () => {
    connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const never = () => new AbortController().signal;

describe("the shop's provider calls over node:http (keep-alive-client.ts)", () => {
  it("answers status, headers and body, and reuses one connection for calls one after another", async () => {
    const before = connections;
    for (let i = 0; i < 5; i++) {
      const answer = await keepAliveRequest(
        new URL("/ok", base),
        { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n: i }) },
        never(),
      );
      expect(answer.status).toBe(200);
      expect(answer.header("content-type")).toBe("application/json");
      expect(JSON.parse(answer.text)).toEqual({ id: "ch_1", echo: { n: i } });
    }
    expect(connections - before).toBe(1);
  });

  it("rejects an answer cut short, and a call its signal aborts with the signal's reason", async () => {
    await expect(keepAliveRequest(new URL("/cut", base), { method: "GET", headers: {} }, never())).rejects.toThrow();
    const controller = new AbortController();
    const call = keepAliveRequest(new URL("/hang", base), { method: "GET", headers: {} }, controller.signal);
    controller.abort(new Error("effect timed out"));
    await expect(call).rejects.toThrow();
  });

  it("refuses a URL it cannot call, naming it", async () => {
    await expect(
      keepAliveRequest(new URL("ftp://127.0.0.1/x"), { method: "GET", headers: {} }, never()),
    ).rejects.toThrow(/unsupported protocol ftp: in ftp:\/\/127\.0\.0\.1\/x/);
  });
});

describe("runRequest on the default client classifies answers as it did on fetch", () => {
  const options = () => ({ baseUrl: base });
  const result = z.object({ id: z.string() });

  it("2xx succeeds with the parsed body, sent with the key; 402 fails with the reason", async () => {
    const ok = await runRequest(options(), "/ok", { amount: 5 }, "key-1", never(), result);
    expect(ok).toMatchObject({ outcome: "succeeded", result: { id: "ch_1" } });
    expect(seen.at(-1)).toEqual({ method: "POST", key: "key-1", body: '{"amount":5}' });
    const declined = await runRequest(options(), "/declined", {}, "key-2", never(), result);
    expect(declined).toMatchObject({ outcome: "failed", reason: "card declined" });
  });

  it("a 503 and a cut answer are ambiguous (ProviderUnavailableError); an abort throws the signal's reason", async () => {
    const busy = runRequest(options(), "/busy", {}, "key-3", never(), result);
    await expect(busy).rejects.toBeInstanceOf(ProviderUnavailableError);
    await expect(busy).rejects.toMatchObject({ status: 503, retryAfterMs: 2000 });
    await expect(runRequest(options(), "/cut", {}, "key-4", never(), result)).rejects.toBeInstanceOf(
      ProviderUnavailableError,
    );
    const controller = new AbortController();
    const reason = new Error("the dispatcher's timeout");
    const hung = runRequest(options(), "/hang", {}, "key-5", controller.signal, result);
    controller.abort(reason);
    await expect(hung).rejects.toBe(reason);
  });
});
