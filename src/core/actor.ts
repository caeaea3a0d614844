import type { SchemaLike } from "../base/standard-schema.js";
import type { Decider, EffectType, MessageOutcome, OutcomeOf, Typed } from "./decider.js";
import type { SchemaOf } from "./upcast.js";

export interface SnapshotPolicy<S> {
  /** Take a snapshot every N events (counted by stream version). */
  every: number;
  /** Shape version of the state. A stored snapshot at another version is migrated or ignored (full replay). */
  schemaVersion: number;
  /**
   * Turn a snapshot stored at an older `fromVersion` into the current state shape; return
   * `undefined` to ignore it (full replay). Without it, an older snapshot is ignored.
   * Counted in `oncely_snapshot_{migrated,ignored}_total{actor_type}`.
   */
  migrate?(state: unknown, fromVersion: number): S | undefined;
  /** Optional check of a loaded snapshot; throw to reject it (full replay is used instead). */
  validate?(state: unknown): S;
}

/**
 * An actor type: a decider plus how the runtime should treat it. `decide` takes the commands `C`
 * and the outcomes `O` the runtime routes back: those of the effects it requests and, when it
 * sends messages, their deliveries (`defineActor` derives `O` from `effects` and `messages`).
 * An actor that asks for durable timers (`deadline(...)`) adds `TimerFired` to its command type:
 * it is sent one per timer.
 */
export interface ActorDefinition<S = unknown, C extends Typed = Typed, E extends Typed = Typed, O extends Typed = never>
  extends Decider<S, C | O, E> {
  /** The address prefix: an actor `order/42` has type `order`. */
  type: string;
  /**
   * The effects its decisions request (see `defineEffect`); their outcomes are typed in `decide`.
   * Once declared, a decision requesting another kind is refused with `UndeclaredEffectError`
   * (durable timers need no declaration).
   */
  effects?: readonly EffectType[];
  /** True when its decisions `send` messages: `decide` then also takes `MessageOutcome`. */
  messages?: boolean;
  snapshot?: SnapshotPolicy<S>;
  /**
   * Event schemas, one per event type (all of them, once declared): the version new events are
   * written at and the upcasters that read older ones (see `upcast.ts`). Without it every event
   * is version 1. A stored event at a version (or of a type) this declaration does not know stops
   * this actor on this worker with `VersionTooNewError`, for a newer worker to handle.
   */
  events?: EventSchemas<E>;
  /**
   * Runs after an actor was rebuilt from its journal (the seed's RecoveryCompleted). It may only
   * return commands, which go to this actor's mailbox; it never performs an effect itself.
   */
  onRecovered?(state: S, context: { address: string; id: string; version: number }): C[];
  /** Validates a command arriving from outside (HTTP, broker, CLI); throw `InvalidInputError`. */
  parseCommand?(input: unknown): C;
  /**
   * A Standard Schema of its commands (zod, valibot, arktype): every command sent to it (by
   * `send`, a handle, a consumer's route, another actor's message) is checked against it before
   * `decide` runs, and refused with `InvalidInputError` naming the field; `decide` gets the
   * schema's output. Outcomes and fired timers (`oncely.*`) are the runtime's and never checked.
   */
  commands?: SchemaLike<C>;
}

/** Schema of every event type of an actor. */
export type EventSchemas<E extends Typed> = { readonly [K in E["type"]]: SchemaOf };

/** What an actor requesting effects `Fx` (a union) and sending messages when `M` receives back. */
export type OutcomesOf<Fx extends EffectType, M extends boolean> =
  | OutcomeOf<Fx>
  | (M extends true ? MessageOutcome : never);

/** An actor as `defineActor` returns it: its declarations keep their types, so `{ ...actor }` can be defined again. */
export type TypedActor<S, C extends Typed, E extends Typed, Fx extends EffectType, M extends boolean> = ActorDefinition<
  S,
  C,
  E,
  OutcomesOf<Fx, M>
> & { effects?: readonly Fx[]; messages?: M };

/**
 * Identity helper that types `decide`: `defineActor<S, C, E, typeof payment | typeof receipt, true>`
 * with `effects: [payment, receipt], messages: true` makes its command `C | OutcomeOf<typeof payment> |
 * OutcomeOf<typeof receipt> | MessageOutcome`; an actor that requests nothing sees only `C`.
 */
export function defineActor<
  S,
  C extends Typed,
  E extends Typed,
  Fx extends EffectType = never,
  M extends boolean = false,
>(definition: TypedActor<S, C, E, Fx, M>): TypedActor<S, C, E, Fx, M> {
  return definition;
}

/**
 * Kinds the library runs itself and every dispatcher serves, requested without a declaration:
 * durable timers (`deadline(...)`, kind `TIMER_KIND` in effects/timer.ts).
 */
const BUILT_IN_KINDS: readonly string[] = ["oncely.timer"];

/**
 * The effect kinds an actor may request: those it declares, plus the built-in ones; `undefined`
 * when it declares none (any kind, as before declarations existed).
 */
export function requestableKinds(definition: Pick<ActorDefinition, "effects">): ReadonlySet<string> | undefined {
  if (definition.effects === undefined) return undefined;
  return new Set([...definition.effects.map((effect) => effect.kind), ...BUILT_IN_KINDS]);
}

/** An actor of any state, command and event type, as a registry holds them. */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds actors of every state and command type
export type AnyActor = ActorDefinition<any, any, any, any>;
