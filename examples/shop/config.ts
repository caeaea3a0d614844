import { z } from "zod";
import { shopKeysVariable } from "./integration/keys.js";
import { natsPasswordsVariable } from "./integration/nats-users.js";
import { DEFAULT_SHIPMENT_DEADLINE_MS } from "./ordering/shipment-deadline.js";
import { MIN_WEBHOOK_SECRET_LENGTH } from "./providers/shared/webhook-signature.js";
import { ADMIN_TOKEN_PATTERN, ADMIN_TOKEN_RULE } from "./service/admin-auth.js";
import { DEFAULT_ORDER_LIMITS } from "./service/validation.js";
import { DEFAULT_SHIPMENT_CHECK_MS } from "./shipping/shipment-check.js";

/**
 * The shop's configuration, from environment variables only (twelve-factor). Every value is
 * validated, and a bad one is reported by its variable name, so a typo never silently becomes a
 * default. An empty variable counts as unset.
 */

const url = (example: string) => z.url(`must be a URL such as ${example}`);
const DATABASE_URL = z
  .string()
  .refine(
    (v) => /^(postgres|postgresql):\/\//.test(v) || /^(sqlite|file):.+/.test(v) || v === "memory:",
    "must be a postgres:// URL (optionally ?schema=name), sqlite:PATH, memory:, or unset for ./data/oncely.db",
  );

export const shopEnvSchema = z.strictObject({
  PORT: z.coerce.number<string>().int("must be an integer").min(0).max(65535, "must be 0-65535").default(3000),
  /** Loopback by default: the shop is reachable from outside only when asked for. */
  HOST: z.string().min(1).default("127.0.0.1"),
  DATABASE_URL: DATABASE_URL.optional(),
  PAYMENT_URL: url("http://127.0.0.1:4001").optional(),
  EMAIL_URL: url("http://127.0.0.1:4002").optional(),
  WAREHOUSE_URL: url("http://127.0.0.1:4003").optional(),
  /** The base URL the warehouse calls back (`{SHOP_URL}/webhooks/warehouse`); default the listening URL. */
  SHOP_URL: url("http://127.0.0.1:3000").optional(),
  /** false for a payment provider that charges again on every request: ambiguous charges are then only looked up. */
  PAYMENT_PROVIDER_DEDUPS: z
    .enum(["true", "false", "1", "0"], { message: "must be true, false, 1 or 0" })
    .transform((v) => v === "true" || v === "1")
    .default(true),
  /** Per call of a provider; the lease, backoffs and lookup pacing are derived from it. */
  EFFECT_TIMEOUT_MS: z.coerce.number<string>().int("must be an integer").min(50).max(600_000).default(5000),
  /**
   * Effects (provider calls) this process's dispatcher runs at once. Each is an HTTP call that mostly
   * waits, so the library's default of 8 held the shop back (see SHOP_EFFECT_CONCURRENCY).
   */
  EFFECT_CONCURRENCY: z.coerce
    .number<string>()
    .int("must be an integer")
    .min(1, "must be at least 1")
    .max(1024, "must be at most 1024")
    .optional(),
  /** This process's name (unique per process): its host's name, the prefix of its lease owners (`NAME/dispatcher`, `NAME/relay`). */
  DISPATCHER_OWNER: z.string().min(1).optional(),
  /**
   * Several workers on one PostgreSQL journal: each runs only the actors of the slices it leases
   * (docs/design/ownership.md), under the worker id DISPATCHER_OWNER (else a fresh one).
   */
  SLICE_LEASES: z
    .enum(["true", "false", "1", "0"], { message: "must be true, false, 1 or 0" })
    .transform((v) => v === "true" || v === "1")
    .default(false),
  /**
   * With SLICE_LEASES: the port this worker serves its slices' commands to the other workers on
   * (0: any free one), so a request that reaches the wrong worker goes straight to the owner rather
   * than through the journal. Needs PEER_SECRET; PEER_HOST (default 127.0.0.1) is where it listens
   * and PEER_ADVERTISE the URL the others reach it at (default http://PEER_HOST:port).
   */
  PEER_PORT: z.coerce.number<string>().int("must be an integer").min(0).max(65_535).optional(),
  PEER_HOST: z.string().min(1).optional(),
  PEER_ADVERTISE: z
    .string()
    .regex(/^https?:\/\/.+/, "must be an http:// URL")
    .optional(),
  /** Shared by every worker (at least 16 characters): each command sent to a peer is signed with it. */
  PEER_SECRET: z.string().min(16, "must be at least 16 characters").optional(),
  /** Transport of integration events; default `nats` when NATS_URL is set, else `in-process`. */
  TRANSPORT: z.enum(["in-process", "nats"], { message: "must be in-process or nats" }).optional(),
  /** NATS server for the JetStream stream `SHOP` (e.g. nats://127.0.0.1:4222). */
  NATS_URL: z
    .string()
    .regex(/^(nats|tls):\/\/.+/, "must be a nats:// URL such as nats://127.0.0.1:4222")
    .optional(),
  /** Signing keys of the contexts' integration events, JSON (see integration/keys.ts); unset: development keys. */
  SHOP_SIGNING_KEYS: shopKeysVariable.optional(),
  /** NATS: `{"ordering":"…","payment":"…",…}`, each context connects as its own user (integration/nats-users.ts). */
  NATS_PASSWORDS: natsPasswordsVariable.optional(),
  /** In-process transport only: probability that an integration event is delivered twice. */
  INTEGRATION_DUPLICATE_RATE: z.coerce.number<string>().min(0).max(1).optional(),
  /** In-process transport only: each delivery waits 0..N ms (which also reorders). */
  INTEGRATION_MAX_DELAY_MS: z.coerce.number<string>().int().min(0).max(60_000).optional(),
  /** In-process transport only: published events are shuffled in windows of this many. */
  INTEGRATION_REORDER_WINDOW: z.coerce.number<string>().int().min(0).max(1000).optional(),
  /** An order whose shipment has not arrived this long after the picklist's acceptance needs attention. */
  SHIPMENT_DEADLINE_MS: z.coerce
    .number<string>()
    .int("must be an integer")
    .min(1)
    .max(30 * 24 * 3_600_000)
    .default(DEFAULT_SHIPMENT_DEADLINE_MS),
  /**
   * A shipment whose webhook has not come this long after the picklist's acceptance asks the
   * warehouse (then after twice as long, …); must be shorter than SHIPMENT_DEADLINE_MS. Unset: a
   * minute, or half the deadline when that is shorter.
   */
  SHIPMENT_CHECK_MS: z.coerce
    .number<string>()
    .int("must be an integer")
    .min(1)
    .max(30 * 24 * 3_600_000)
    .optional(),
  /** A gap in a producer's sequence open longer than this is alerted. */
  GAP_TIMEOUT_MS: z.coerce.number<string>().int().min(100).max(3_600_000).optional(),
  /** Bearer token of `/admin/*`; unset: generated and printed, allowed only on a loopback HOST. */
  ONCELY_ADMIN_TOKEN: z.string().regex(ADMIN_TOKEN_PATTERN, ADMIN_TOKEN_RULE).optional(),
  /** Shared with the warehouse, which signs its webhooks with it; required with WAREHOUSE_URL. */
  WAREHOUSE_WEBHOOK_SECRET: z
    .string()
    .min(MIN_WEBHOOK_SECRET_LENGTH, `must be at least ${MIN_WEBHOOK_SECRET_LENGTH} characters`)
    .optional(),
  /** How far a webhook's signed timestamp may lie from the shop's clock. */
  WEBHOOK_TOLERANCE_S: z.coerce.number<string>().int("must be an integer").min(1).max(86_400).default(300),
  /** Largest order total in minor units (cents). */
  MAX_ORDER_TOTAL: z.coerce
    .number<string>()
    .int("must be an integer")
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .default(DEFAULT_ORDER_LIMITS.maxOrderTotal),
  /** Most lines per order. */
  MAX_ORDER_LINES: z.coerce
    .number<string>()
    .int("must be an integer")
    .min(1)
    .max(10_000)
    .default(DEFAULT_ORDER_LIMITS.maxLines),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("warn"),
});

export type ShopEnv = z.infer<typeof shopEnvSchema>;

/** Configuration problems, each naming the environment variable. */
export class ShopConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid shop configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ShopConfigError";
  }
}

/** Reads the variables this schema knows from `env` (others are ignored), validates, names bad ones. */
export function loadShopEnv(env: Record<string, string | undefined>): ShopEnv {
  const raw: Record<string, string> = {};
  for (const name of Object.keys(shopEnvSchema.shape)) {
    const value = env[name];
    if (value !== undefined && value !== "") raw[name] = value;
  }
  const parsed = shopEnvSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ShopConfigError(
      parsed.error.issues.map((issue) => {
        const name = String(issue.path[0] ?? "environment");
        const shown = raw[name] === undefined || SECRETS.has(name) ? "" : ` (got "${redact(raw[name])}")`;
        return `${name}: ${issue.message}${shown}`;
      }),
    );
  }
  const config = parsed.data;
  const deadline = config.SHIPMENT_DEADLINE_MS;
  const check = config.SHIPMENT_CHECK_MS ?? Math.max(1, Math.min(DEFAULT_SHIPMENT_CHECK_MS, Math.floor(deadline / 2)));
  // The warehouse is asked before the order needs attention, or the check could only ever clear it afterwards.
  if (check >= deadline) {
    throw new ShopConfigError([
      `SHIPMENT_CHECK_MS: must be shorter than SHIPMENT_DEADLINE_MS (${deadline}), so the warehouse is asked before the order needs attention (got "${check}")`,
    ]);
  }
  if (config.PEER_PORT !== undefined && (config.PEER_SECRET === undefined || !config.SLICE_LEASES)) {
    throw new ShopConfigError([
      "PEER_PORT: needs SLICE_LEASES=1 (the leases say which worker owns what) and PEER_SECRET (the same on every worker)",
    ]);
  }
  return { ...config, SHIPMENT_CHECK_MS: check };
}

/** Never echo a token, a secret, a key or a password (or a URL's password, below) back into an error message. */
const SECRETS = new Set([
  "PEER_SECRET",
  "ONCELY_ADMIN_TOKEN",
  "WAREHOUSE_WEBHOOK_SECRET",
  "SHOP_SIGNING_KEYS",
  "NATS_PASSWORDS",
]);

const redact = (value: string) => value.replace(/\/\/([^:/@]+):[^@/]*@/, "//$1:***@");
