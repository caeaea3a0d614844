import type { Typed } from "../core/decider.js";
import type { Envelope } from "./envelope.js";
import type { Advance, Monotonic } from "./facts.js";

/** Tools a projection may use; they keep counting out of the pure `project` function's signature. */
export interface ProjectTools {
  /** `m.advance(current, next)`, counting a backwards move under `fact` (metric `oncely_fact_backwards_total`). */
  advance<S extends string>(fact: string, m: Monotonic<S>, current: S | undefined, next: S): Advance<S>;
}

/**
 * A read-model projection: `(doc | undefined, envelope) → doc` on a documents collection, committed
 * together with the consumer's inbox row. Updates should be commutative and monotonic
 * (`shipped = true`), so arrival order does not matter in facts mode.
 * Return `undefined` for "no change", `null` to delete the document.
 */
export interface ProjectionHandler<D = unknown> {
  kind: "projection";
  collection: string;
  /** Document id for an event; `undefined` when the event does not concern this projection. */
  key(envelope: Envelope): string | undefined;
  project(doc: D | undefined, envelope: Envelope, tools: ProjectTools): D | null | undefined;
}

/**
 * Turn an event into a command for an actor. The command is sent with `messageId = eventId`:
 * the actor's own inbox, committed with its events, is what makes a redelivery harmless.
 */
export interface CommandHandler {
  kind: "command";
  route(envelope: Envelope): CommandTarget | undefined;
}

/** Where an event's command goes. */
export interface CommandTarget {
  address: string;
  command: Typed;
  /**
   * The event starts this actor (its first command: `OrderPlaced` for `payment/<order>`): it is
   * decided on the initial state without reading the actor (`SendOptions.expectNew`). Only a hint:
   * if the actor has events after all (the event redelivered), the commit conflicts and the command
   * is decided again on the stored state, and the inbox answers a command already handled.
   */
  expectNew?: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: a consumer holds projections of any document shape
export type ConsumerHandler = ProjectionHandler<any> | CommandHandler;

export type HandleOutcome = "applied" | "duplicate" | "parked" | "ignored";

export interface HandleResult {
  outcome: HandleOutcome;
  /** Parked messages applied after this one filled a gap (sequenced mode). */
  released: number;
}
