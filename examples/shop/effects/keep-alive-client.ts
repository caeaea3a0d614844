import http from "node:http";
import https from "node:https";
import { text as readText } from "node:stream/consumers";

/** What the effect handlers read of an answer: its status, one header, the whole body as text. */
export interface RawAnswer {
  status: number;
  header(name: string): string | undefined;
  text: string;
}

/**
 * Idle sockets are closed before the providers' own keep-alive timeout (Node's server: 5 s), so a
 * request is not written on a socket the server is closing (a reset of a POST is ambiguous: the
 * effect would go Unknown and be looked up for nothing). Node 20's agent lowers this further to
 * the server's `Keep-Alive: timeout=` hint minus a second; without a timeout of its own it keeps
 * idle sockets forever whatever the hint says.
 */
const IDLE_SOCKET_MS = 4000;

const agents = {
  "http:": new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
  "https:": new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
};

/**
 * One HTTP request on a pooled keep-alive connection, through `node:http`: the provider calls of
 * the shop's effects. Global `fetch` does the same on its own pool, but builds WHATWG Request,
 * Headers, Response and body streams around each call: measured on this machine at about four
 * times the CPU of a call (client and a local server, docs/benchmarks.md, 2026-12-05).
 *
 * Rejects (the caller tells an abort by its signal) when the connection fails, resets, or closes
 * before the whole body arrived, and when `signal` aborts, before or during the answer.
 */
export function keepAliveRequest(
  url: URL,
  init: { method: string; headers: Record<string, string>; body?: string },
  signal: AbortSignal,
): Promise<RawAnswer> {
  const agent = url.protocol === "https:" ? agents["https:"] : url.protocol === "http:" ? agents["http:"] : undefined;
  if (agent === undefined) return Promise.reject(new Error(`unsupported protocol ${url.protocol} in ${url.href}`));
  const client = url.protocol === "https:" ? https : http;
  return new Promise<RawAnswer>((resolve, reject) => {
    const headers =
      init.body === undefined
        ? init.headers
        : { ...init.headers, "content-length": String(Buffer.byteLength(init.body)) };
    const req = client.request(url, { method: init.method, headers, agent, signal }, (res) => {
      readText(res).then((text) => {
        // A body cut short may end the stream without an error: `complete` tells it from a whole one.
        if (!res.complete) {
          reject(new Error(`${init.method} ${url.href}: the connection closed before the whole answer arrived`));
          return;
        }
        resolve({ status: res.statusCode ?? 0, header: (name) => headerOf(res.headers[name]), text });
      }, reject);
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

const headerOf = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value.join(", ") : value;
