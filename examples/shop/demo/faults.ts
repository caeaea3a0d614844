import type { Random } from "oncely";
import type { InProcessFaultKnobs } from "oncely/testing";
import type { EmailFaults } from "../providers/email/server.js";
import type { PaymentFaults } from "../providers/payment/server.js";
import type { WarehouseFaults } from "../providers/warehouse/server.js";

/**
 * What the demo does to the shop. Provider knobs are drawn per request from each provider's
 * seeded random; worker kills follow a schedule drawn from the demo's seeded random. The same
 * seed gives the same knobs and the same schedule (which requests meet a fault also depends on
 * how the requests interleave, which the OS decides).
 */

export const FAULT_LEVELS = ["none", "light", "heavy"] as const;
export type FaultLevel = (typeof FAULT_LEVELS)[number];

export interface KillPlan {
  /** Most worker kills in one run (SIGKILL from the parent plus self-kills at a fault point). */
  max: number;
  /** Delay before each kill, drawn uniformly in [minGapMs, maxGapMs], counted from the worker's readiness. */
  minGapMs: number;
  maxGapMs: number;
  /**
   * Chance that an incarnation is started with `ONCELY_FAULT=dispatch.afterProvider:kill:N`: it
   * dies right after a provider answered and before the outcome is recorded (the double-charge window).
   */
  faultPointRate: number;
}

export interface FaultProfile {
  level: FaultLevel;
  payment: Partial<PaymentFaults>;
  email: Partial<EmailFaults>;
  warehouse: Partial<WarehouseFaults>;
  kills: KillPlan;
  /** Fraction of orders the client posts twice on purpose (same key, same body): a double-click. */
  replayRate: number;
  /**
   * Misdelivery of integration events by the in-process transport: duplicates, delays (which
   * reorder) and shuffled windows. With NATS the broker is real and nothing is injected.
   */
  integration: InProcessFaultKnobs;
  /** A gap in a producer's sequence open longer than this is alerted (and supplied from the producer). */
  gapTimeoutMs: number;
  /**
   * Order i is sent no earlier than i × arrivalMs after the first. Paced under faults, so kills land
   * while orders are still coming in; 0 without faults, so the run measures the shop, not the pace.
   */
  arrivalMs: number;
  /**
   * Most orders placed and not yet ended at once (the client waits below it). Without faults 100: a
   * backlog of thousands would measure queueing, not the shop. Ended orders are learned from the
   * polled /admin/stats, so the window is a little wider in practice.
   */
  maxOpenOrders: number;
}

/** Slow answers take longer than the shop's per-call timeout (the demo sets it to 1000 ms). */
const SLOW_MS = 1500;

export function faultProfile(level: FaultLevel): FaultProfile {
  switch (level) {
    case "none":
      return {
        level,
        payment: {},
        email: {},
        warehouse: {},
        kills: { max: 0, minGapMs: 0, maxGapMs: 0, faultPointRate: 0 },
        replayRate: 0,
        integration: {},
        gapTimeoutMs: 30_000,
        arrivalMs: 0,
        maxOpenOrders: 100,
      };
    case "light":
      return {
        level,
        payment: { failRate: 0.05, slowRate: 0.02, slowMs: SLOW_MS, dropAfterRate: 0.05 },
        email: { failRate: 0.05, dropAfterRate: 0.03 },
        warehouse: { failRate: 0.03, dropAfterRate: 0.03, duplicateRate: 0.2, lateRate: 0.1, lateMs: 500 },
        kills: { max: 2, minGapMs: 1500, maxGapMs: 4000, faultPointRate: 0.5 },
        replayRate: 0.05,
        integration: { duplicateRate: 0.1, maxDelayMs: 300, reorderWindow: 4 },
        gapTimeoutMs: 2_000,
        arrivalMs: 40,
        maxOpenOrders: Number.POSITIVE_INFINITY,
      };
    case "heavy":
      return {
        level,
        payment: { failRate: 0.15, slowRate: 0.05, slowMs: SLOW_MS, dropAfterRate: 0.15 },
        email: { failRate: 0.1, slowRate: 0.03, slowMs: SLOW_MS, dropAfterRate: 0.1 },
        warehouse: {
          failRate: 0.1,
          slowRate: 0.03,
          slowMs: SLOW_MS,
          dropAfterRate: 0.1,
          duplicateRate: 0.4,
          lateRate: 0.3,
          lateMs: 1500,
        },
        kills: { max: 8, minGapMs: 500, maxGapMs: 2000, faultPointRate: 0.4 },
        replayRate: 0.1,
        integration: { duplicateRate: 0.3, maxDelayMs: 1_500, reorderWindow: 8 },
        gapTimeoutMs: 1_000,
        arrivalMs: 40,
        maxOpenOrders: Number.POSITIVE_INFINITY,
      };
  }
}

/** Delay before the next kill. */
export function nextKillDelay(plan: KillPlan, random: Random): number {
  return Math.round(plan.minGapMs + random.next() * (plan.maxGapMs - plan.minGapMs));
}

/** The `ONCELY_FAULT` for the next incarnation, or undefined (killed from outside only). */
export function incarnationFault(plan: KillPlan, random: Random): string | undefined {
  const armed = random.next() < plan.faultPointRate;
  // Always draw the second value, so one decision never shifts the sequence of the next.
  const after = 3 + Math.floor(random.next() * 25);
  return armed ? `dispatch.afterProvider:kill:${after}` : undefined;
}
