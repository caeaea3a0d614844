import { isDeepStrictEqual } from "node:util";
import type { ActorDefinition } from "../core/actor.js";
import type { Decision, Typed } from "../core/decider.js";

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
      return {
        /** The decision's events equal `expected` (deep, in order). Returns the whole decision. */
        // biome-ignore lint/suspicious/noThenProperty: given/when/then is the public testing API; `when()` is never awaited
        then(expected: E[]): Decision<E> {
          const decision = run();
          const actual = decision.events ?? [];
          if (!isDeepStrictEqual(actual, expected)) {
            throw new Error(`expected events\n${show(expected)}\nbut decide returned\n${show(actual)}`);
          }
          return decision;
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

const show = (value: unknown) => JSON.stringify(value, null, 2);
