import type { Decider, EffectOutcome, Typed } from "./decider.js";

export interface SnapshotPolicy<S> {
  /** Take a snapshot every N events (counted by stream version). */
  every: number;
  /** Shape version of the state. A stored snapshot with another version is ignored (full replay). */
  schemaVersion: number;
  /** Optional check of a loaded snapshot; throw to reject it (full replay is used instead). */
  validate?(state: unknown): S;
}

/**
 * An actor type: a decider plus how the runtime should treat it. Commands include the
 * effect/delivery outcomes the runtime routes back (`EffectOutcome`). An actor that asks for
 * durable timers (`deadline(...)`) adds `TimerFired` to its command type: it is sent one per timer.
 */
export interface ActorDefinition<S = unknown, C extends Typed = Typed, E extends Typed = Typed>
  extends Decider<S, C | EffectOutcome, E> {
  /** The address prefix: an actor `order/42` has type `order`. */
  type: string;
  snapshot?: SnapshotPolicy<S>;
  /**
   * Runs after an actor was rebuilt from its journal (the seed's RecoveryCompleted). It may only
   * return commands, which go to this actor's mailbox; it never performs an effect itself.
   */
  onRecovered?(state: S, context: { address: string; id: string; version: number }): C[];
  /** Validates a command arriving from outside (HTTP, broker, CLI); throw `InvalidInputError`. */
  parseCommand?(input: unknown): C;
}

/** Identity helper that keeps the generic types inferred. */
export function defineActor<S, C extends Typed, E extends Typed>(
  definition: ActorDefinition<S, C, E>,
): ActorDefinition<S, C, E> {
  return definition;
}

/** An actor of any state, command and event type, as a registry holds them. */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds actors of every state and command type
export type AnyActor = ActorDefinition<any, any, any>;
