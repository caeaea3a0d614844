import { createHash, timingSafeEqual } from "node:crypto";
import { InvalidInputError } from "../base/errors.js";

/** An operator token: long enough not to be guessed, visible ASCII so it survives a header and a form. */
export const BEARER_TOKEN_PATTERN = /^[\x21-\x7e]{16,256}$/;
export const BEARER_TOKEN_RULE = "must be 16-256 visible ASCII characters";

export type BearerCheck = "ok" | "missing" | "invalid";

/** Throws `InvalidInputError` naming the rule when `token` cannot be an operator token. */
export function assertBearerToken(token: string, name = "token"): string {
  if (!BEARER_TOKEN_PATTERN.test(token)) throw new InvalidInputError(`${name} ${BEARER_TOKEN_RULE}`);
  return token;
}

/**
 * Checks an `Authorization` header against `Bearer <token>`. Both sides are hashed first so the
 * comparison takes the same time whatever the length or the first wrong byte.
 */
export function bearerVerifier(token: string): (authorization: unknown) => BearerCheck {
  const expected = digest(token);
  return (authorization) => {
    const match = typeof authorization === "string" ? /^Bearer +(\S+) *$/i.exec(authorization) : null;
    if (!match) return "missing";
    return timingSafeEqual(digest(match[1] as string), expected) ? "ok" : "invalid";
  };
}

const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();
