import { isDeepStrictEqual } from "node:util";
import type { ActorDefinition } from "../core/actor.js";
import type { Decision, EffectRequest, MessageRequest, PublishRequest, Typed } from "../core/decider.js";

/**
 * Given/when/then for deciders, with no runtime and no store:
 *
 * @example
 * given(order, [orderPlaced])
 *   .when({ type: "oncely.effect.succeeded", key: "order:1:payment", ... })
 *   .then([{ type: "PaymentCompleted", paymentId: "p1" }]);
 */
export function given<S, C extends Typed, E extends Typed, O extends Typed = never>(
  actor: ActorDefinition<S, C, E, O>,
  events: E[],
  options: { id?: string; now?: number; messageId?: string } = {},
) {
  const id = options.id ?? "test";
  const state = events.reduce((s, e) => actor.evolve(s, e), actor.initialState(id));
  const context = {
    address: `${actor.type}/${id}`,
    id,
    now: options.now ?? Date.UTC(2026, 0, 1),
    messageId: options.messageId,
    version: events.length,
  };
  return {
    state,
    when(command: C | O) {
      const run = (): Decision<E> => actor.decide(command, state, context);
      /** An assertion that one part of the decision equals what is expected; returns the whole decision. */
      const part =
        <T>(what: string, of: (decision: Decision<E>) => T) =>
        (expected: T): Decision<E> => {
          const decision = run();
          same(what, expected, of(decision));
          return decision;
        };
      return {
        /** The decision's events equal `expected` (deep, in order). Returns the whole decision. */
        // biome-ignore lint/suspicious/noThenProperty: given/when/then is the public testing API; `when()` is never awaited
        then: part<E[]>("events", (d) => d.events ?? []),
        /** The decision requests exactly these effects (kind, key, input, notBefore; deep, in order). */
        thenEffects: part<EffectRequest[]>("effects", (d) => d.effects ?? []),
        /** The decision publishes exactly these integration events (deep, in order). */
        thenPublishes: part<PublishRequest[]>("publications", (d) => d.publish ?? []),
        /** The decision sends exactly these actor-to-actor messages (deep, in order). */
        thenSends: part<MessageRequest[]>("messages", (d) => d.send ?? []),
        /** The decision's reply equals `expected` (deep; `undefined` when it gives none). */
        thenReply: part<unknown>("reply", (d) => d.reply),
        /**
         * The state after the decision's events, folded with `evolve` onto the given state, equals
         * `expected` (deep). Returns that state.
         */
        thenState(expected: S): S {
          const decision = run();
          const after = (decision.events ?? []).reduce((s, e) => actor.evolve(s, e), state);
          same("state", expected, after, "evolve made");
          return after;
        },
        /** No events, effects, messages or publications. */
        thenNothingHappened(): Decision<E> {
          const decision = run();
          const count =
            (decision.events?.length ?? 0) +
            (decision.effects?.length ?? 0) +
            (decision.send?.length ?? 0) +
            (decision.publish?.length ?? 0);
          if (count > 0) throw new Error(`expected nothing to happen, but decide returned\n${show(decision)}`);
          return decision;
        },
        /** decide throws an instance of `errorClass` (optionally with a message matching `message`). */
        thenThrows(errorClass: new (...args: never[]) => Error, message?: RegExp): Error {
          let thrown: unknown;
          try {
            run();
          } catch (error) {
            thrown = error;
          }
          if (!(thrown instanceof errorClass)) {
            throw new Error(
              `expected decide to throw ${errorClass.name}, got ${thrown === undefined ? "no error" : String(thrown)}`,
            );
          }
          if (message && !message.test(thrown.message)) {
            throw new Error(`expected ${errorClass.name} message to match ${message}, got "${thrown.message}"`);
          }
          return thrown;
        },
        /** The whole decision, for custom assertions on effects, messages and reply. */
        decision: run,
      };
    },
  };
}

const show = (value: unknown) => (value === undefined ? "undefined" : JSON.stringify(value, null, 2));

function same(what: string, expected: unknown, actual: unknown, source = "decide returned"): void {
  if (!isDeepStrictEqual(actual, expected)) {
    throw new Error(`expected ${what}\n${show(expected)}\nbut ${source}\n${show(actual)}`);
  }
}
