import type { FastifyRequest } from "fastify";
import { BEARER_TOKEN_PATTERN, BEARER_TOKEN_RULE, bearerVerifier } from "oncely/console";
import { UnauthorizedError } from "./errors.js";

/**
 * The operator API (`/admin/*`) can settle money, so it answers only `Authorization: Bearer <token>`
 * with the token from `ONCELY_ADMIN_TOKEN`. Without one, a token is generated at start (printed
 * by `npm run serve`), which is only allowed while the shop listens on loopback: anyone who can
 * reach a public port must not be one guess away from settling a payment. No cookies: a browser
 * must not be able to ride an operator's session.
 */

export const ADMIN_TOKEN_PATTERN = BEARER_TOKEN_PATTERN;
export const ADMIN_TOKEN_RULE = BEARER_TOKEN_RULE;

/** 127.0.0.0/8, ::1 and localhost: the addresses only this machine can reach. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127(\.\d{1,3}){3}$/.test(bare) || bare === "::ffff:127.0.0.1";
}

/** Refused before listening: the shop must not serve its admin API beyond loopback with a token nobody chose. */
export class AdminTokenRequiredError extends Error {
  constructor(host: string) {
    super(
      `refusing to listen on ${host} without an admin token: set ONCELY_ADMIN_TOKEN (${ADMIN_TOKEN_RULE}), ` +
        "or listen on loopback (HOST=127.0.0.1) where a generated token is printed",
    );
    this.name = "AdminTokenRequiredError";
  }
}

/**
 * The token the admin API answers to: the given one, or one generated from `randomBytes` (injected)
 * when the shop listens on loopback.
 */
export function resolveAdminToken(
  given: string | undefined,
  host: string,
  randomBytes: (size: number) => Buffer,
): { token: string; generated: boolean } {
  if (given !== undefined) {
    if (!ADMIN_TOKEN_PATTERN.test(given)) throw new Error(`admin token ${ADMIN_TOKEN_RULE}`);
    return { token: given, generated: false };
  }
  if (!isLoopback(host)) throw new AdminTokenRequiredError(host);
  return { token: `adm_${randomBytes(24).toString("base64url")}`, generated: true };
}

/**
 * An `onRequest` hook that answers 401 unless the request carries the token: the same check as
 * the operator console's (`bearerVerifier`, a constant-time comparison of hashes).
 */
export function requireAdminToken(token: string): (request: FastifyRequest) => Promise<void> {
  const verify = bearerVerifier(token);
  return async (request) => {
    const check = verify(request.headers.authorization);
    if (check === "missing") {
      throw new UnauthorizedError("admin API: send Authorization: Bearer <ONCELY_ADMIN_TOKEN>", "Bearer");
    }
    if (check === "invalid")
      throw new UnauthorizedError("admin API: invalid bearer token", 'Bearer error="invalid_token"');
  };
}
