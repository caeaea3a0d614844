import type { EffectOutcomeOf, EffectRequest, MessageOutcome, MessageRequest } from "../core/decider.js";

/** The outcome of type `T` for a request of kind `K` with input `I` (result `R`), as the dispatcher builds it. */
type Of<T extends EffectOutcomeOf["type"], K extends string = string, I = unknown, R = unknown> = Extract<
  EffectOutcomeOf<K, I, R>,
  { type: T }
>;
type MessageOf<T extends MessageOutcome["type"]> = Extract<MessageOutcome, { type: T }>;

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
  succeeded<K extends string, I, R>(
    effect: EffectRequest<K, I>,
    result: R,
    options: OutcomeOptions = {},
  ): Of<"oncely.effect.succeeded", K, I, R> {
    const { key, kind, input } = effect;
    return { type: "oncely.effect.succeeded", key, kind, input, result, ...learned(options) };
  },
  /** The provider refused it for good. */
  failed<K extends string, I>(
    effect: EffectRequest<K, I>,
    error: string,
    options: OutcomeOptions = {},
  ): Of<"oncely.effect.failed", K, I> {
    const { key, kind, input } = effect;
    return { type: "oncely.effect.failed", key, kind, input, error, ...learned(options) };
  },
  /** Ambiguous: the provider may or may not have acted; lookups follow. */
  unknown<K extends string, I>(
    effect: EffectRequest<K, I>,
    error = "timed out",
    attempt = 1,
  ): Of<"oncely.effect.unknown", K, I> {
    const { key, kind, input } = effect;
    return { type: "oncely.effect.unknown", key, kind, input, error, attempt };
  },
  /** Still unknown after the lookups: waits for an operator. */
  needsReconciliation<K extends string, I>(
    effect: EffectRequest<K, I>,
    error = "lookups exhausted",
    attempt = 1,
  ): Of<"oncely.effect.needs-reconciliation", K, I> {
    const { key, kind, input } = effect;
    return { type: "oncely.effect.needs-reconciliation", key, kind, input, error, attempt };
  },
  /** The receiving actor recorded the message; `reply` is its reply. */
  delivered(message: MessageRequest, reply: unknown = null): MessageOf<"oncely.message.delivered"> {
    return { type: "oncely.message.delivered", id: message.id, to: message.to, reply };
  },
  /** The receiving actor refused the message. */
  rejected(message: MessageRequest, error: string): MessageOf<"oncely.message.rejected"> {
    return { type: "oncely.message.rejected", id: message.id, to: message.to, error };
  },
};
