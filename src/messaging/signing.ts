import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { canonicalJson } from "../base/canonical-json.js";
import { InvalidInputError, TerminalError } from "../base/errors.js";
import type { Envelope } from "./envelope.js";
import { sourceOfSubject, subjectToken } from "./subjects.js";

/**
 * Authenticity of integration events: HMAC-SHA256 over the canonical envelope.
 *
 * A producer signs with the current key of its keyring and writes the key's id in the envelope
 * (`keyId`); a consumer verifies with the keys it accepts for the envelope's `source` only, so a
 * key can vouch for its own source and nothing else. Rotation: add the new key to every verifier,
 * then make it current at the producer, then (after the longest redelivery period) drop the old one.
 *
 * HMAC keys are shared secrets: whoever can verify a source's events could also sign them. Give a
 * consumer only the keys of the sources it reads; where that is not enough, an asymmetric scheme
 * (Ed25519) is the next step. Broker permissions (who may publish on which subject) are the other
 * half of the defence.
 */

/** One secret, named by an id that travels in the envelope. At least 32 bytes (the HMAC-SHA256 block strength). */
export interface SigningKey {
  id: string;
  secret: Uint8Array;
}

/** A source's keys: `current` signs, every key verifies (old ones stay during a rotation). */
export interface Keyring {
  current: string;
  keys: readonly SigningKey[];
}

export const MIN_SECRET_BYTES = 32;
const KEY_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

/** Validate and build a keyring; throws `InvalidInputError` naming what is wrong. */
export function keyring(current: string, keys: readonly SigningKey[]): Keyring {
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const key of keys) {
    if (!KEY_ID.test(key.id)) problems.push(`key id "${key.id}" must match ${KEY_ID}`);
    if (ids.has(key.id)) problems.push(`key id "${key.id}" appears twice`);
    ids.add(key.id);
    if (key.secret.length < MIN_SECRET_BYTES)
      problems.push(`key "${key.id}" has ${key.secret.length} bytes; at least ${MIN_SECRET_BYTES} are needed`);
  }
  if (!ids.has(current)) problems.push(`the current key "${current}" is not among the keys`);
  if (problems.length > 0) throw new InvalidInputError("invalid keyring", problems);
  return { current, keys: [...keys] };
}

/** What is signed: the whole envelope, `keyId` included, `signature` left out. */
export function signedContent(envelope: Envelope): string {
  const { signature: _signature, ...rest } = envelope;
  return canonicalJson(rest);
}

const mac = (secret: Uint8Array, content: string): Buffer => createHmac("sha256", secret).update(content).digest();

/** Why a consumer refused to believe a message; also the `reason` label of the rejection metric. */
export type RejectionReason = "unsigned" | "unknown-key" | "bad-signature" | "source-mismatch";

/** A message that could not be verified. Terminal: no retry makes a forgery authentic. */
export class AuthenticityError extends TerminalError {
  constructor(
    readonly reason: RejectionReason,
    message: string,
  ) {
    super(`${reason}: ${message}`);
  }
}

export interface Signer {
  /** The envelope with `keyId` and `signature` set; throws `InvalidInputError` for a source it has no key for. */
  sign(envelope: Envelope): Envelope;
}

/** Signs each envelope with the current key of its `source`'s keyring (each producing context has its own). */
export function signerFor(keyrings: Readonly<Record<string, Keyring>>): Signer {
  return {
    sign(envelope) {
      const ring = Object.hasOwn(keyrings, envelope.source) ? keyrings[envelope.source] : undefined;
      const key = ring?.keys.find((k) => k.id === ring.current);
      if (!key) throw new InvalidInputError(`no signing key for source "${envelope.source}"`);
      const unsigned: Envelope = { ...envelope, keyId: key.id, signature: undefined };
      return { ...unsigned, signature: mac(key.secret, signedContent(unsigned)).toString("base64url") };
    },
  };
}

export interface VerifierOptions {
  /**
   * Subject prefix of `<prefix>.<source>.<type>`: a message whose subject names another source
   * than its envelope is refused. Unset: the subject is not checked.
   */
  subjectPrefix?: string | undefined;
}

export interface Verifier {
  /** Throws `AuthenticityError` unless the envelope is signed by a key accepted for its source (and its subject matches). */
  verify(envelope: Envelope, subject?: string): void;
}

/** Accepts, per source, the keys of that source's keyring, and nothing else. */
export function verifierFor(accepted: Readonly<Record<string, Keyring>>, options: VerifierOptions = {}): Verifier {
  return {
    verify(envelope, subject) {
      if (subject !== undefined && options.subjectPrefix !== undefined) {
        const named = sourceOfSubject(options.subjectPrefix, subject);
        if (named !== subjectToken(envelope.source))
          throw new AuthenticityError(
            "source-mismatch",
            `event ${envelope.eventId} from source "${envelope.source}" arrived on subject "${subject}"`,
          );
      }
      if (envelope.keyId === undefined || envelope.signature === undefined)
        throw new AuthenticityError("unsigned", `event ${envelope.eventId} carries no keyId and signature`);
      const ring = Object.hasOwn(accepted, envelope.source) ? accepted[envelope.source] : undefined;
      const key = ring?.keys.find((k) => k.id === envelope.keyId);
      if (!key)
        throw new AuthenticityError(
          "unknown-key",
          `key "${envelope.keyId}" is not accepted for source "${envelope.source}" (event ${envelope.eventId})`,
        );
      const expected = mac(key.secret, signedContent(envelope));
      const given = Buffer.from(envelope.signature, "base64url");
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        throw new AuthenticityError(
          "bad-signature",
          `event ${envelope.eventId} does not match its signature under key "${key.id}"`,
        );
    },
  };
}

/**
 * The broker's dedup id for an envelope: its `eventId` and a hash of its whole content (signature
 * included). A republish of the same outbox row has the same content, so the broker drops it; a
 * message that differs in anything (a forgery under a real `eventId`, a real one with a modified
 * payload) gets another id, so it can neither take the real event's dedup slot nor be dropped by
 * the broker without a trace: it reaches the consumers, which refuse it or record the conflict.
 */
export const brokerMessageId = (envelope: Envelope): string =>
  `${envelope.eventId}#${bodyFingerprint(`${signedContent(envelope)}\n${envelope.signature ?? ""}`)}`;

/** A short stable fingerprint of a body (dead-letter ids of rejected messages). */
export const bodyFingerprint = (body: string): string =>
  createHash("sha256").update(body).digest("base64url").slice(0, 22);
