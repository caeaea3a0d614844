import type { Random } from "oncely";
import { z } from "zod";

/**
 * Fault knobs shared by every fake provider. All of them are driven by one seeded random per
 * provider, so the same seed and the same request sequence give the same faults.
 */
const rate = z.number().min(0).max(1);

export const baseFaultsShape = {
  /** Answer 5xx without doing anything. */
  failRate: rate,
  /** Do the work, then answer only after `slowMs` (past the client's timeout). */
  slowRate: rate,
  slowMs: z.number().int().min(0),
  /** Do the work (charge, send), then destroy the socket without answering. */
  dropAfterRate: rate,
};

export const baseFaultsSchema = z.strictObject(baseFaultsShape);
export type BaseFaults = z.infer<typeof baseFaultsSchema>;

export const noBaseFaults: BaseFaults = { failRate: 0, slowRate: 0, slowMs: 0, dropAfterRate: 0 };

/** What the faults decided for one request. */
export interface FaultPlan {
  fail: boolean;
  slow: boolean;
  dropAfter: boolean;
}

/**
 * Always draws the same number of values per request, whatever the outcome, so one request's
 * faults never shift the random sequence seen by the next one.
 */
export function drawFaults(faults: BaseFaults, random: Random): FaultPlan {
  const fail = random.next() < faults.failRate;
  const slow = random.next() < faults.slowRate;
  const dropAfter = random.next() < faults.dropAfterRate;
  return { fail, slow, dropAfter };
}

/** A holder for the current faults of a provider; updates are partial and validated. */
export class FaultSettings<F extends BaseFaults> {
  private current: F;
  constructor(
    private readonly schema: z.ZodType<F>,
    defaults: F,
    initial: Partial<F> | undefined,
  ) {
    this.current = this.schema.parse({ ...defaults, ...(initial ?? {}) });
  }

  get(): F {
    return this.current;
  }

  /** Merges a partial update; throws a ZodError naming the field when it is invalid. */
  set(update: unknown): F {
    if (typeof update !== "object" || update === null || Array.isArray(update)) {
      throw new z.ZodError([{ code: "custom", path: [], message: "faults must be a JSON object", input: update }]);
    }
    this.current = this.schema.parse({ ...this.current, ...update });
    return this.current;
  }
}
