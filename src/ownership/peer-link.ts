import { Agent, request } from "node:http";
import { RetryableError } from "../base/errors.js";
import { PEER_PATH, PEER_SIGNATURE_HEADER, type PeerAnswer, type PeerRequest, signPeerBody } from "./peer-protocol.js";

/** How a router reaches a peer: one request, one answer, or a throw when the peer could not be reached or read. */
export interface PeerLink {
  send(endpoint: string, request: PeerRequest, timeoutMs: number): Promise<PeerAnswer>;
  close(): void;
}

/**
 * A peer that did not answer (refused, reset, timed out) or answered something that is not a
 * `PeerAnswer`. Retryable: the router takes the journal path with the same message id.
 */
export class PeerUnreachableError extends RetryableError {}

const ANSWER_KINDS = new Set(["handled", "not-owner", "rejected", "retryable"]);

/**
 * Node's `http` with keep-alive sockets, one pool per process: a forward costs one request on a warm
 * connection, no TLS (peers sit on a private network), a body signed under the workers' secret.
 */
export class HttpPeerLink implements PeerLink {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });

  constructor(private readonly secret: string) {}

  send(endpoint: string, peerRequest: PeerRequest, timeoutMs: number): Promise<PeerAnswer> {
    const body = JSON.stringify(peerRequest);
    const url = new URL(PEER_PATH, endpoint);
    return new Promise<PeerAnswer>((resolve, reject) => {
      const req = request(
        url,
        {
          method: "POST",
          agent: this.agent,
          headers: {
            "content-type": "application/json",
            "content-length": Buffer.byteLength(body),
            [PEER_SIGNATURE_HEADER]: signPeerBody(this.secret, body),
          },
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", (error) =>
            reject(new PeerUnreachableError(`reading ${url.origin}'s answer: ${error.message}`)),
          );
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let answer: unknown;
            try {
              answer = JSON.parse(text);
            } catch {
              answer = undefined;
            }
            const kind = (answer as { kind?: unknown } | undefined)?.kind;
            if (typeof kind === "string" && ANSWER_KINDS.has(kind)) resolve(answer as PeerAnswer);
            else reject(new PeerUnreachableError(`${url.origin} answered ${res.statusCode}: ${text.slice(0, 200)}`));
          });
        },
      );
      req.on("timeout", () =>
        req.destroy(new PeerUnreachableError(`no answer from ${url.origin} within ${timeoutMs} ms`)),
      );
      req.on("error", (error) =>
        reject(
          error instanceof PeerUnreachableError ? error : new PeerUnreachableError(`${url.origin}: ${error.message}`),
        ),
      );
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}
