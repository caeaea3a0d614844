import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { InvalidInputError } from "../base/errors.js";
import type { Typed } from "../core/decider.js";

/**
 * The wire format of a command sent straight to the worker that owns its actor's slice (see
 * `CommandRouter`'s peers): one HTTP POST of a JSON body, signed with HMAC-SHA256 under a secret the
 * workers share, answered with one JSON object. Plain JSON over HTTP/1.1 keep-alive, so any worker
 * reaches any other with nothing but Node's `http`.
 *
 * The endpoint runs commands on the owner's actors, so it refuses anything not signed with the
 * secret: a worker's peer port must still sit on a private network, as its database does.
 */

/** The path every peer endpoint answers on. */
export const PEER_PATH = "/oncely/peer/send";
/** The header carrying the body's HMAC-SHA256, hex. */
export const PEER_SIGNATURE_HEADER = "x-oncely-peer-signature";

/** What the forwarding worker sends: the command and what makes it the same command on a retry. */
export interface PeerRequest {
  address: string;
  command: Typed;
  /** Always set: the same id goes to the journal if the peer does not answer, and the actor's inbox dedups it. */
  messageId: string;
  correlationId?: string | undefined;
}

/** What a peer answers. */
export type PeerAnswer =
  /** The owner ran it (or found the message id already handled: `duplicate`). */
  | { kind: "handled"; reply: unknown; duplicate: boolean; version: number }
  /** The peer does not own the actor's slice (any more): the caller goes through the journal. */
  | { kind: "not-owner" }
  /** The owner refused the command for good (its decision, its schema): as a local send would throw. */
  | { kind: "rejected"; name: string; message: string }
  /** The owner could not run it now (its journal blinked, a conflict kept repeating): the journal path takes it. */
  | { kind: "retryable"; name: string; message: string };

export const peerRequestSchema = z.object({
  address: z.string().min(3),
  command: z.looseObject({ type: z.string().min(1) }),
  messageId: z.string().min(1),
  correlationId: z.string().optional(),
});

/** The body's signature under `secret`. */
export function signPeerBody(secret: string, body: string): string {
  return createHmac("sha256", secret).update(body).digest("hex");
}

/** Whether `signature` is `body`'s under `secret`, compared in constant time. */
export function verifyPeerBody(secret: string, body: string, signature: string | undefined): boolean {
  if (signature === undefined || !/^[0-9a-f]{64}$/.test(signature)) return false;
  return timingSafeEqual(Buffer.from(signPeerBody(secret, body), "hex"), Buffer.from(signature, "hex"));
}

/** A shared secret too short to sign with is a configuration error, named. */
export function requirePeerSecret(secret: unknown): string {
  if (typeof secret !== "string" || secret.length < 16) {
    throw new InvalidInputError("peers.secret must be a string of at least 16 characters, shared by every worker");
  }
  return secret;
}
