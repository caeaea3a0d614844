import { z } from "zod";
import { EFFECT_POLICY_DEFAULTS, EFFECT_RETRY_DEFAULTS } from "../base/defaults.js";
import { InvalidInputError } from "../base/errors.js";
import type { Backoff, EffectPolicy } from "./types.js";

/**
 * Defaults are cautious: a provider is assumed NOT to dedup, so an ambiguous run goes Unknown
 * and is looked up or reconciled rather than run again blindly.
 */
export const DEFAULT_EFFECT_POLICY: EffectPolicy = {
  timeoutMs: EFFECT_POLICY_DEFAULTS.timeoutMs,
  providerDedups: false,
  maxAttempts: EFFECT_POLICY_DEFAULTS.maxAttempts,
  backoff: { ...EFFECT_RETRY_DEFAULTS.backoff },
  notPerformedMaxAttempts: EFFECT_RETRY_DEFAULTS.notPerformedMaxAttempts,
  notPerformedMaxAgeMs: EFFECT_RETRY_DEFAULTS.notPerformedMaxAgeMs,
  lookupAttempts: EFFECT_POLICY_DEFAULTS.lookupAttempts,
  lookupBackoff: { ...EFFECT_POLICY_DEFAULTS.lookupBackoff },
  rerunAfterNotFoundMs: null,
  leaseMs: EFFECT_POLICY_DEFAULTS.leaseMs,
};

const backoffSchema = z
  .object({
    initialMs: z.number().int().nonnegative(),
    maxMs: z.number().int().nonnegative(),
    multiplier: z.number().min(1),
    jitter: z.number().min(0).max(1),
  })
  .refine((b) => b.maxMs >= b.initialMs, { message: "maxMs must be >= initialMs" });

const policySchema = z
  .object({
    timeoutMs: z.number().int().positive(),
    providerDedups: z.boolean(),
    maxAttempts: z.number().int().min(1),
    backoff: backoffSchema,
    notPerformedMaxAttempts: z.number().int().min(1),
    notPerformedMaxAgeMs: z.number().int().positive().nullable(),
    lookupAttempts: z.number().int().min(0),
    lookupBackoff: backoffSchema,
    rerunAfterNotFoundMs: z.number().int().nonnegative().nullable(),
    leaseMs: z.number().int().positive(),
  })
  // A lease shorter than a call would let a second dispatcher start the same key while the first still waits.
  .refine((p) => p.leaseMs > p.timeoutMs, { message: "leaseMs must be longer than timeoutMs" });

/** Merge partial policies over the defaults (later wins) and validate the result. */
export function resolvePolicy(...layers: (Partial<EffectPolicy> | undefined)[]): EffectPolicy {
  let merged: EffectPolicy = DEFAULT_EFFECT_POLICY;
  for (const layer of layers) {
    if (!layer) continue;
    merged = {
      ...merged,
      ...layer,
      backoff: { ...merged.backoff, ...(layer.backoff as Partial<Backoff> | undefined) },
      lookupBackoff: { ...merged.lookupBackoff, ...(layer.lookupBackoff as Partial<Backoff> | undefined) },
    };
  }
  const parsed = policySchema.safeParse(merged);
  if (!parsed.success) {
    throw new InvalidInputError(
      "invalid effect policy",
      parsed.error.issues.map((i) => `${i.path.join(".") || "policy"}: ${i.message}`),
    );
  }
  return merged;
}
