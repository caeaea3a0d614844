/**
 * The decider: three pure functions that are the whole of an actor's logic.
 * The runtime (`runtime.ts`) persists what `decide` returns and only then lets anything leave
 * the process; `evolve` is the only code that runs during recovery.
 */

/** Anything with a `type` tag: commands and events are plain JSON objects. */
export interface Typed {
  type: string;
}

/**
 * A request to something outside, with a key that names the business action (`order:42:payment`).
 * Build it with a declared effect's `request` (see `defineEffect`) to have kind and input typed.
 */
export interface EffectRequest<K extends string = string, I = unknown> {
  kind: K;
  /** Stable idempotency key. Derive it from business identity, never from an attempt or a random id. */
  key: string;
  input: I;
  /**
   * Version of the input's shape (default 1), stored with the row; a handler reading a newer
   * shape declares `inputVersion` and `upcastInput` so rows requested by older code still run.
   */
  inputVersion?: number;
  /** Do not run before this time (epoch ms): a durable timer. */
  notBefore?: number;
}

/**
 * What `decide` knows of a declared effect (see `defineEffect`): its kind and, for the type checker
 * only, its input and result types. Core types name no handler, so deciders stay pure.
 */
export interface EffectType<K extends string = string, I = unknown, R = unknown> {
  readonly kind: K;
  /** Type-level only: never present at run time. */
  readonly "~types"?: { readonly input: I; readonly result: R } | undefined;
}

/** A command for another actor, delivered at least once and deduplicated by the receiver's inbox. */
export interface MessageRequest {
  /** Receiver address `type/id`, e.g. `warehouse/main`. */
  to: string;
  /** Stable delivery id, e.g. `order:42:picklist`. */
  id: string;
  command: Typed;
  /**
   * This message starts its receiver (its first command, as a shipment's start): delivered, it is
   * decided without reading the receiver (`SendOptions.expectNew`). Only a hint: a receiver with
   * events after all is read and the command decided again, and its inbox answers a redelivery.
   */
  expectNew?: boolean;
}

/** An integration event for other bounded contexts, published through the outbox after commit. */
export interface PublishRequest {
  /** Stable event id; also the broker's dedup id. */
  eventId: string;
  type: string;
  /** Producing bounded context, e.g. `payment`. */
  source: string;
  aggregateId: string;
  /**
   * The event's position in its actor's sequence of published events, what a sequenced consumer
   * orders by. Leave it out: the runtime stamps 1, 2, 3, … per `source/aggregateId` with no holes, in
   * the commit that publishes (see `core/published-versions.ts`). Given, it is kept as is (an
   * actor numbers all of its publishes itself, or none).
   */
  aggregateVersion?: number;
  /** Version of the payload's shape (default 1); consumers upcast older ones (see `Consumer`'s `upcast`). */
  schemaVersion?: number;
  payload: unknown;
}

export interface Decision<E extends Typed = Typed> {
  events?: E[];
  effects?: EffectRequest[];
  send?: MessageRequest[];
  publish?: PublishRequest[];
  /** Returned to the caller, and stored in the inbox for duplicates of the same message. */
  reply?: unknown;
}

/** Inputs `decide` may read besides command and state. Passed in, so `decide` stays pure. */
export interface DecideContext {
  /** Actor address, `type/id`. */
  address: string;
  /** The id part of the address. */
  id: string;
  /** Current time from the injected clock. */
  now: number;
  /** Id of the message being handled, when it has one. */
  messageId: string | undefined;
  /** Version of the stream the decision is based on. */
  version: number;
}

export interface Decider<S, C extends Typed, E extends Typed> {
  initialState(id: string): S;
  /** Pure and deterministic: no I/O, no clock, no randomness, no effects. Recovery runs only this. */
  evolve(state: S, event: E): S;
  /** Pure: returns events, effects, messages and a reply. Throw `CommandRejectedError` to refuse. */
  decide(command: C, state: S, context: DecideContext): Decision<E>;
}

type Via = "run" | "lookup" | "operator";

/**
 * The outcomes of one effect kind, sent back to the owning actor as commands. Each carries the
 * input the effect was requested with (read from its outbox row), so the actor never parses keys.
 */
export type EffectOutcomeOf<K extends string = string, I = unknown, R = unknown> =
  | {
      type: "oncely.effect.succeeded";
      key: string;
      kind: K;
      input: I;
      result: R;
      attempt: number;
      /** How the outcome was learned. */
      via: Via;
      /** The operator who settled it (via "operator" only). */
      settledBy?: string;
      /** The operator's note (via "operator" only). */
      note?: string;
    }
  | {
      type: "oncely.effect.failed";
      key: string;
      kind: K;
      input: I;
      error: string;
      attempt: number;
      via: Via;
      /** The operator who settled it (via "operator" only). */
      settledBy?: string;
      /** The operator's note (via "operator" only). */
      note?: string;
    }
  | {
      /** Not final: the provider may or may not have acted. A resolver or an operator will settle it. */
      type: "oncely.effect.unknown";
      key: string;
      kind: K;
      input: I;
      error: string;
      attempt: number;
    }
  | {
      /** Still unknown after the resolver's budget: it now waits in the reconciliation queue. */
      type: "oncely.effect.needs-reconciliation";
      key: string;
      kind: K;
      input: I;
      error: string;
      attempt: number;
    };

/** The outcomes of an actor-to-actor message, sent back to the sender as commands. */
export type MessageOutcome =
  | { type: "oncely.message.delivered"; id: string; to: string; reply: unknown }
  | { type: "oncely.message.rejected"; id: string; to: string; error: string };

/** The outcomes of the declared effect(s) `F` (a union distributes): `OutcomeOf<typeof payment>`. */
export type OutcomeOf<F> = F extends EffectType<infer K, infer I, infer R> ? EffectOutcomeOf<K, I, R> : never;

/**
 * Every outcome, untyped: an actor may still take `C | EffectOutcome` and narrow by hand. `input`
 * is optional here only so that outcomes built by hand (older tests) still typecheck; the
 * dispatcher always sets it.
 */
export type EffectOutcome = LooseInput<EffectOutcomeOf> | MessageOutcome;
type LooseInput<T> = T extends unknown ? Omit<T, "input"> & { input?: unknown } : never;

/**
 * A durable timer the actor asked for (`deadline(...)`) is due. The actor's state decides what
 * it means: ignore it when the awaited fact already came (nothing to cancel, no race).
 */
export interface TimerFired {
  type: "oncely.timer.fired";
  /** The timer's key, as requested. */
  key: string;
  /** The timer's name (a metric label: keep the set small), e.g. `shipment`. */
  name: string;
  /** What the actor attached when it asked for the timer. */
  payload: unknown;
  /** When it was due (epoch ms); it fires at the dispatcher's next poll after that. */
  dueAt: number;
}

/** What the runtime routes back to an owner and records once per key: effect and delivery outcomes, fired timers. */
export type RoutedOutcome = EffectOutcome | TimerFired;

/** Whether a command is a routed outcome: of an effect (`oncely.effect.*`), a message delivery (`oncely.message.*`) or a timer. */
export const isRoutedOutcome = (command: Typed): command is RoutedOutcome =>
  command.type.startsWith("oncely.effect.") ||
  command.type.startsWith("oncely.message.") ||
  command.type === "oncely.timer.fired";

/** Outcomes after which the outbox row is finished; the runtime marks it done in the same commit. */
export function finalOutcome(command: RoutedOutcome): { id: string; outcome: string; result?: unknown } | undefined {
  switch (command.type) {
    case "oncely.effect.succeeded":
      return { id: command.key, outcome: "completed", result: command.result };
    case "oncely.effect.failed":
      return { id: command.key, outcome: "failed", result: { error: command.error } };
    case "oncely.message.delivered":
      return { id: command.id, outcome: "delivered", result: command.reply };
    case "oncely.message.rejected":
      return { id: command.id, outcome: "rejected", result: { error: command.error } };
    case "oncely.timer.fired":
      return { id: command.key, outcome: "fired", result: command.payload };
    default:
      return undefined;
  }
}

/** The inbox message id under which an outcome is recorded: first final outcome of a key wins. */
export function outcomeMessageId(command: RoutedOutcome): string {
  switch (command.type) {
    case "oncely.effect.succeeded":
    case "oncely.effect.failed":
      return `${command.key}#outcome`;
    case "oncely.effect.unknown":
      return `${command.key}#unknown:${command.attempt}`;
    case "oncely.effect.needs-reconciliation":
      return `${command.key}#reconcile`;
    case "oncely.message.delivered":
    case "oncely.message.rejected":
      return `${command.id}#outcome`;
    case "oncely.timer.fired":
      return `${command.key}#outcome`;
  }
}
