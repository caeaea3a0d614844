import { createHmac } from "node:crypto";
import { type Keyring, keyring, MIN_SECRET_BYTES, type Signer, signerFor, type Verifier, verifierFor } from "oncely";
import { z } from "zod";
import { SHOP_SUBJECT_PREFIX } from "./events.js";
import { jsonVariable } from "./json-variable.js";

/**
 * The signing keys of the shop's contexts: each producing context signs its integration events
 * with its own key, and every consumer accepts, per source, only that source's keys.
 *
 * Configured by `SHOP_SIGNING_KEYS`, a JSON object per context:
 * `{"ordering":{"current":"o-2","keys":{"o-2":"<base64>","o-1":"<base64>"}},"payment":{…},…}`
 * (secrets of at least 32 bytes, e.g. `openssl rand -base64 32`). Unset: development keys derived
 * from a fixed phrase, the same in every process (workers restart and must verify what an earlier
 * incarnation signed), and public: fine for the demo, worthless anywhere else.
 *
 * Rotation, with no message refused on the way: (1) add the new key to `keys` everywhere, `current`
 * unchanged, and restart; (2) make it `current` and restart; (3) once the longest redelivery period
 * (broker retention, dead letters you may replay) has passed, remove the old key.
 */

/** Contexts that publish integration events (fulfillment publishes none today, but owns its subject and key). */
export const SIGNING_CONTEXTS = ["ordering", "payment", "shipping", "fulfillment"] as const;
export type SigningContext = (typeof SIGNING_CONTEXTS)[number];
export type ShopKeys = Record<SigningContext, Keyring>;

const DEV_PHRASE = "oncely shop development signing key; never use in production";
/** Per context, so a key id alone already says whose key it is. */
export const devKeyId = (context: SigningContext): string => `${context}-dev-1`;

let devKeys: ShopKeys | undefined;

/** The development keys: HMAC(phrase, context), so every process derives the same ones (derived once). */
export function devShopKeys(): ShopKeys {
  const ring = (context: SigningContext) =>
    keyring(devKeyId(context), [
      { id: devKeyId(context), secret: createHmac("sha256", DEV_PHRASE).update(context).digest() },
    ]);
  devKeys ??= Object.fromEntries(SIGNING_CONTEXTS.map((c) => [c, ring(c)])) as ShopKeys;
  return devKeys;
}

const secret = z
  .string()
  .transform((value) => Buffer.from(value, "base64"))
  .refine((bytes) => bytes.length >= MIN_SECRET_BYTES, `must be base64 of at least ${MIN_SECRET_BYTES} bytes`);
const ringSchema = z.strictObject({ current: z.string().min(1), keys: z.record(z.string(), secret) });
const keysSchema = z.strictObject(
  Object.fromEntries(SIGNING_CONTEXTS.map((c) => [c, ringSchema])) as Record<SigningContext, typeof ringSchema>,
);

/** `SHOP_SIGNING_KEYS` as parsed by the shop's config schema: JSON, every context present, valid keyrings. */
export const shopKeysVariable = jsonVariable(
  keysSchema,
  "a JSON object of keyrings per context (see integration/keys.ts)",
).transform((data, ctx): ShopKeys => {
  const rings: Partial<ShopKeys> = {};
  for (const context of SIGNING_CONTEXTS) {
    const { current, keys } = data[context];
    try {
      rings[context] = keyring(
        current,
        Object.entries(keys).map(([id, bytes]) => ({ id, secret: bytes })),
      );
    } catch (error) {
      ctx.addIssue({ code: "custom", message: `${context}: ${error instanceof Error ? error.message : error}` });
      return z.NEVER;
    }
  }
  return rings as ShopKeys;
});

/** The relay's signer: each event signed with the current key of its source. */
export const shopSigner = (keys: ShopKeys): Signer => signerFor(keys);

/** The consumers' verifier: a source's keys vouch only for that source, arriving on `shop.<source>.*`. */
export const shopVerifier = (keys: ShopKeys): Verifier => verifierFor(keys, { subjectPrefix: SHOP_SUBJECT_PREFIX });
