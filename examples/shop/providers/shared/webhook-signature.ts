import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Signed webhooks, as payment providers sign theirs: the sender puts
 * `Oncely-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>` on each call;
 * the receiver recomputes the HMAC over the raw body bytes it received (never a re-serialised
 * parse, which may differ by a space) and refuses the call unless one `v1` matches and `t` lies
 * within the tolerance of its own clock. The timestamp is signed too, so an old call cannot be
 * replayed under a fresh one; within the window a replay is an exact duplicate, which the
 * receiver deduplicates by `eventId` anyway. Several `v1` values are accepted, for rotating the
 * secret without a window of failures.
 */

export const SIGNATURE_HEADER = "oncely-signature";
export const DEFAULT_WEBHOOK_TOLERANCE_MS = 5 * 60_000;
/** A shared secret shorter than this is refused by configuration. */
export const MIN_WEBHOOK_SECRET_LENGTH = 16;

const hmac = (secret: string, timestamp: number, body: Buffer) =>
  createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest();

/** The `Oncely-Signature` header value for `body` sent at `nowMs`. */
export function signWebhook(secret: string, body: string | Buffer, nowMs: number): string {
  const timestamp = Math.floor(nowMs / 1000);
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  return `t=${timestamp},v1=${hmac(secret, timestamp, bytes).toString("hex")}`;
}

export type SignatureCheck = { ok: true } | { ok: false; reason: string };

/** Checks a received call; the reason says what was wrong (missing, malformed, stale, mismatch). */
export function verifyWebhookSignature(options: {
  secret: string;
  header: string | string[] | undefined;
  rawBody: Buffer;
  nowMs: number;
  toleranceMs: number;
}): SignatureCheck {
  const { header } = options;
  if (header === undefined || header === "") return fail("missing Oncely-Signature header");
  if (Array.isArray(header)) return fail("more than one Oncely-Signature header");
  let timestamp: number | undefined;
  const signatures: Buffer[] = [];
  for (const part of header.split(",")) {
    const [name, value = ""] = part.trim().split("=", 2) as [string, string?];
    if (name === "t" && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (name === "v1" && /^[0-9a-f]{64}$/.test(value)) signatures.push(Buffer.from(value, "hex"));
  }
  if (timestamp === undefined || signatures.length === 0) {
    return fail("malformed Oncely-Signature header: expected t=<unix seconds>,v1=<hex HMAC-SHA256>");
  }
  const skewMs = Math.abs(options.nowMs - timestamp * 1000);
  if (skewMs > options.toleranceMs) {
    return fail(
      `stale signature: signed at ${new Date(timestamp * 1000).toISOString()}, ` +
        `outside the tolerance of ${Math.round(options.toleranceMs / 1000)} s`,
    );
  }
  const expected = hmac(options.secret, timestamp, options.rawBody);
  // Every candidate is compared in constant time; all have the HMAC's length, checked by the regex.
  const matches = signatures.filter((candidate) => timingSafeEqual(candidate, expected)).length;
  return matches > 0 ? { ok: true } : fail("signature does not match the body");
}

const fail = (reason: string): SignatureCheck => ({ ok: false, reason });
