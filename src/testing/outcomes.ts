import type { EffectOutcome, EffectRequest, MessageRequest } from "../core/decider.js";

type Of<T extends EffectOutcome["type"]> = Extract<EffectOutcome, { type: T }>;

/** How an effect's final outcome was learned, and by whom (an operator's settlement). */
export interface OutcomeOptions {
  attempt?: number;
  via?: "run" | "lookup" | "operator";
  settledBy?: string;
  note?: string;
}

function learned(options: OutcomeOptions) {
  return {
    attempt: options.attempt ?? 1,
    via: options.via ?? "run",
    ...(options.settledBy === undefined ? {} : { settledBy: options.settledBy }),
    ...(options.note === undefined ? {} : { note: options.note }),
  };
}

/**
 * The commands the dispatcher sends an actor about what it asked for, built from the request a
 * decision made, so a decider spec reads as the protocol does:
 *
 * @example
 * const request = given(checkout, []).when({ type: "Checkout", amount: 5 }).decision().effects?.[0];
 * given(checkout, [started]).when(outcome.succeeded(request, { id: "ch_1" })).then([paid]);
 *
 * (`outcome.succeeded` builds a command for `decide`; the handler-side `succeeded(result)` from
 * `oncely` is what a handler returns.)
 */
export const outcome = {
  /** The provider did it: `result` is what the handler returned. */
  succeeded(effect: EffectRequest, result: unknown, options: OutcomeOptions = {}): Of<"oncely.effect.succeeded"> {
    return { type: "oncely.effect.succeeded", key: effect.key, kind: effect.kind, result, ...learned(options) };
  },
  /** The provider refused it for good. */
  failed(effect: EffectRequest, error: string, options: OutcomeOptions = {}): Of<"oncely.effect.failed"> {
    return { type: "oncely.effect.failed", key: effect.key, kind: effect.kind, error, ...learned(options) };
  },
  /** Ambiguous: the provider may or may not have acted; lookups follow. */
  unknown(effect: EffectRequest, error = "timed out", attempt = 1): Of<"oncely.effect.unknown"> {
    return { type: "oncely.effect.unknown", key: effect.key, kind: effect.kind, error, attempt };
  },
  /** Still unknown after the lookups: waits for an operator. */
  needsReconciliation(
    effect: EffectRequest,
    error = "lookups exhausted",
    attempt = 1,
  ): Of<"oncely.effect.needs-reconciliation"> {
    return { type: "oncely.effect.needs-reconciliation", key: effect.key, kind: effect.kind, error, attempt };
  },
  /** The receiving actor recorded the message; `reply` is its reply. */
  delivered(message: MessageRequest, reply: unknown = null): Of<"oncely.message.delivered"> {
    return { type: "oncely.message.delivered", id: message.id, to: message.to, reply };
  },
  /** The receiving actor refused the message. */
  rejected(message: MessageRequest, error: string): Of<"oncely.message.rejected"> {
    return { type: "oncely.message.rejected", id: message.id, to: message.to, error };
  },
};
