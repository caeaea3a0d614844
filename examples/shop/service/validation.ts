import { InvalidInputError, unstorableReason } from "oncely";
import { z } from "zod";

/**
 * The bounds of the shop's HTTP API, in one place. Everything a client sends passes here before it
 * reaches an actor, so a value the journal cannot store, or a total no provider should charge,
 * is a 400 naming the field, never a 500 from the back end or a charge.
 *
 * The text check is local to the shop for now: PostgreSQL cannot store U+0000 in `text`/`jsonb`
 * (errors 22021, 22P05) and an unpaired UTF-16 surrogate is not valid UTF-8 at all; SQLite stores
 * both, so without this check the same request is accepted on one back end and a 500 on the other.
 * (The library is to export a reusable check; this one should then give way to it.)
 */

export interface OrderLimits {
  /** Largest order total in minor units (cents). Default 100,000,000 (one million in major units). */
  maxOrderTotal: number;
  /** Most lines per order. Default 100. */
  maxLines: number;
}

export const DEFAULT_ORDER_LIMITS: OrderLimits = { maxOrderTotal: 100_000_000, maxLines: 100 };
/** RFC 5321 caps a forward path at 256 octets including the brackets: 254 for the address. */
export const MAX_EMAIL_LENGTH = 254;
export const MAX_SKU_LENGTH = 64;
export const MAX_QUANTITY = 10_000;

/** Why `text` cannot be stored on every back end, or undefined when it can (the library's one rule). */
export const unstorableTextReason = unstorableReason;

/**
 * The first string (or object key) anywhere in a parsed JSON value, a query or route parameters
 * that cannot be stored, as `field: reason`; undefined when all can.
 */
export function unstorableTextIssue(value: unknown, path: string): string | undefined {
  if (typeof value === "string") {
    const reason = unstorableTextReason(value);
    return reason === undefined ? undefined : `${path || "body"}: ${reason}`;
  }
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const issue = unstorableTextIssue(item, join(path, String(index)));
      if (issue) return issue;
    }
    return undefined;
  }
  // Not bytes: a Buffer (the raw body of a signed webhook) is checked after it is parsed. Parsed
  // queries and route parameters have prototypes of their own, so any other object is walked.
  if (value !== null && typeof value === "object" && !ArrayBuffer.isView(value)) {
    for (const [key, item] of Object.entries(value)) {
      const keyReason = unstorableTextReason(key);
      if (keyReason) return `${join(path, JSON.stringify(key))}: the field name ${keyReason}`;
      const issue = unstorableTextIssue(item, join(path, key));
      if (issue) return issue;
    }
  }
  return undefined;
}

/** Throws `InvalidInputError` (400) naming the first unstorable string in `value`. */
export function assertStorableText(value: unknown, path: string, what: string): void {
  const issue = unstorableTextIssue(value, path);
  if (issue) throw new InvalidInputError(what, [issue]);
}

const join = (path: string, key: string) => (path === "" ? key : `${path}.${key}`);

/** Node's own ISO 4217 list, so "XYZ" is refused and no list is maintained by hand. */
const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf("currency"));

const boundedText = (max: number) =>
  z
    .string()
    .trim()
    .min(1, "must not be empty")
    .max(max, `must be at most ${max} characters`)
    .superRefine((text, ctx) => {
      const reason = unstorableTextReason(text);
      if (reason) ctx.addIssue({ code: "custom", message: reason });
    });

/** The body of `POST /orders`, with its bounds; the order's own schema then checks the command. */
export function orderBodySchema(limits: OrderLimits) {
  const line = z.strictObject({
    sku: boundedText(MAX_SKU_LENGTH),
    quantity: z
      .number()
      .int("must be a whole number")
      .positive("must be at least 1")
      .max(MAX_QUANTITY, `must be at most ${MAX_QUANTITY}`),
    unitPrice: z
      .number()
      .int("must be an integer in minor units (cents)")
      .nonnegative("must not be negative")
      .max(limits.maxOrderTotal, `must be at most ${limits.maxOrderTotal} (the largest order total)`),
  });
  return z
    .strictObject({
      email: boundedText(MAX_EMAIL_LENGTH),
      currency: z
        .string()
        .transform((c) => c.toUpperCase())
        .refine((c) => CURRENCIES.has(c), "must be an ISO 4217 currency code such as EUR or USD"),
      lines: z
        .array(line)
        .min(1, "must hold at least one line")
        .max(limits.maxLines, `must hold at most ${limits.maxLines} lines`),
    })
    .superRefine((body, ctx) => {
      const total = body.lines.reduce((sum, l) => sum + l.quantity * l.unitPrice, 0);
      if (total > limits.maxOrderTotal) {
        ctx.addIssue({
          code: "custom",
          path: ["amount"],
          message: `order total ${total} exceeds the maximum of ${limits.maxOrderTotal} minor units`,
        });
      }
    });
}
