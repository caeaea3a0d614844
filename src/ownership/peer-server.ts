import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Counter, type Registry } from "prom-client";
import { isRetryable, NotOwnerError, RuntimeClosedError } from "../base/errors.js";
import type { Logger } from "../core/logger.js";
import { type Ownership, sliceOfAddress } from "../core/slices.js";
import { perRegistry } from "../observability/per-registry.js";
import {
  PEER_PATH,
  PEER_SIGNATURE_HEADER,
  type PeerAnswer,
  type PeerRequest,
  peerRequestSchema,
  verifyPeerBody,
} from "./peer-protocol.js";
import type { LocalRuntime } from "./router.js";

export interface PeerServerOptions {
  /** Runs the command here: the runtime itself, never a router (a peer never forwards again). */
  runtime: LocalRuntime;
  ownership: Ownership;
  secret: string;
  logger: Logger;
  registry: Registry;
  /** Largest body accepted, in bytes (default 1 MiB): a command is small. */
  maxBodyBytes?: number;
}

const metricsFor = perRegistry(
  (registry) =>
    new Counter({
      name: "oncely_peer_requests_total",
      help: "Commands received from another worker for an actor of a slice this worker owns, by how they ended",
      labelNames: ["outcome"],
      registers: [registry],
    }),
);

/**
 * The endpoint other workers send a command to when this worker owns its actor's slice: it checks
 * the signature, the body and the ownership, and runs the command on this worker's runtime with the
 * sender's message id. A body that is not signed with the workers' secret, or not a command, is
 * answered 401 or 400 with what is wrong, logged at warn and counted: never run.
 *
 * Failure window: the answer is lost after the command committed (the sender timed out, the
 * connection broke). The sender then commits the same command as a journal forward under the same
 * message id, and the actor's inbox answers it as a duplicate with the stored reply: once.
 */
export class PeerServer {
  private readonly server: Server;
  private readonly requests: Counter<"outcome">;
  private readonly maxBodyBytes: number;

  constructor(private readonly options: PeerServerOptions) {
    this.requests = metricsFor(options.registry);
    this.maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
    this.server = createServer((req, res) => {
      this.handle(req, res).catch((error: unknown) => {
        options.logger.error({ err: error }, "peer endpoint failed to answer");
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: "internal error" }));
      });
    });
    // Peers keep their sockets open between commands: longer than their idle pools, so the server is not the one to cut.
    this.server.keepAliveTimeout = 65_000;
  }

  /** Listen on `port` (0: any free one) of `host`; resolves to the port listened on. */
  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => {
        this.server.off("error", reject);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "POST" || req.url !== PEER_PATH) {
      return this.refuse(res, 404, `only POST ${PEER_PATH} is served here`);
    }
    const body = await readBody(req, this.maxBodyBytes);
    if (body === undefined) return this.refuse(res, 413, `body over ${this.maxBodyBytes} bytes`);
    const signature = req.headers[PEER_SIGNATURE_HEADER];
    if (!verifyPeerBody(this.options.secret, body, typeof signature === "string" ? signature : undefined)) {
      return this.refuse(res, 401, `missing or wrong ${PEER_SIGNATURE_HEADER}: not signed with the workers' secret`);
    }
    let parsed: PeerRequest;
    try {
      const result = peerRequestSchema.safeParse(JSON.parse(body));
      if (!result.success) {
        const issue = result.error.issues[0];
        return this.refuse(res, 400, `not a peer command: ${issue?.path.join(".") || "body"}: ${issue?.message}`);
      }
      parsed = result.data as PeerRequest;
    } catch {
      return this.refuse(res, 400, "not a peer command: the body is not JSON");
    }
    const answer = await answerPeerRequest(this.options.runtime, this.options.ownership, parsed);
    this.requests.inc({ outcome: answer.kind });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(answer));
  }

  private refuse(res: ServerResponse, status: number, error: string): void {
    this.requests.inc({ outcome: "refused" });
    this.options.logger.warn({ status, error }, "peer endpoint refused a request");
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify({ error }));
  }
}

/** The whole body as text, or undefined past `max` bytes (the rest is not read). */
function readBody(req: IncomingMessage, max: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/**
 * What a worker answers a peer's command with, whatever carried it (`PeerServer` over HTTP, or an
 * in-memory link in a simulation): `not-owner` unless it owns the actor's slice now (checked before
 * running, and again by the runtime and the fence), else the command run on `runtime` under the
 * sender's message id: `handled`, `rejected` for a refusal for good, `retryable` for the rest.
 */
export async function answerPeerRequest(
  runtime: LocalRuntime,
  ownership: Ownership,
  request: PeerRequest,
): Promise<PeerAnswer> {
  if (!ownership.owns(sliceOfAddress(request.address, ownership.sliceCount))) return { kind: "not-owner" };
  try {
    const result = await runtime.send(request.address, request.command, {
      messageId: request.messageId,
      ...(request.correlationId === undefined ? {} : { correlationId: request.correlationId }),
    });
    return { kind: "handled", reply: result.reply ?? null, duplicate: result.duplicate, version: result.version };
  } catch (error) {
    if (error instanceof NotOwnerError || (error instanceof Error && error.name === "FencedOutError")) {
      return { kind: "not-owner" };
    }
    // A runtime closing under a request (this worker stopping): the sender's journal path takes it.
    if (error instanceof RuntimeClosedError) return { kind: "retryable", name: error.name, message: error.message };
    const { name, message } = error instanceof Error ? error : { name: "Error", message: String(error) };
    return isRetryable(error) ? { kind: "retryable", name, message } : { kind: "rejected", name, message };
  }
}
