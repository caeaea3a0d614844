import type { EffectOutcome } from "../core/decider.js";
import type { OutboxStatus } from "../journal/types.js";
import type { EffectRowState } from "./row-state.js";
import type { Backoff, DefiniteResult, NotPerformed } from "./types.js";

/**
 * The vocabulary of `effectTransition`: what happened (events, facts the interpreter gathered by
 * I/O or by running a handler's own checks) and what to do next (data, never done here).
 * See docs/design/effect-transition.md for the table of states and events.
 */

/** A row's input for its handler: readable (`ok`), or why not. Gathered once a row is claimed. */
export type InputCheck =
  | { ok: true }
  /** Written by newer code than this dispatcher's handler: left for a dispatcher that reads it. */
  | { tooNew: string }
  /** No upcast step reads it. */
  | { unreadable: string }
  /** Upcast, but the handler's `parseInput` refused it. */
  | { invalid: string };

/** What a `run` call came to, classified (see `answers.ts`). */
export type RunAnswer =
  | { kind: "definite"; answer: DefiniteResult }
  | { kind: "not-performed"; answer: NotPerformed }
  /** The provider may or may not have acted (a throw, a timeout, an unreadable 2xx body, no outcome). */
  | { kind: "ambiguous"; reason: string };

/** What a `lookup` call came to, classified. */
export type LookupAnswer =
  | { kind: "definite"; answer: DefiniteResult }
  | { kind: "not-found" }
  /** Nothing definite: an error, `unknown`, an invalid answer, an unreadable result. */
  | { kind: "unclear"; problem: string };

export type EffectEvent =
  /** A dispatcher holds the row's lease and asks what to do with it. */
  | {
      type: "claimed";
      /** This dispatcher's name (said in the row's `lastError` when it backs off). */
      dispatcher: string;
      /** The handler registered for the row's kind here, if any. */
      handler: { lookup: boolean } | undefined;
      /** The row's input, checked by the handler (undefined without a handler). */
      input: InputCheck | undefined;
      /** An operator's settlement checked by the handler's `parseResult` (operator settlements only). */
      settlement?: { ok: true; result: unknown } | { ok: false; reason: string } | undefined;
    }
  /**
   * The run is about to start (after the `dispatch.beforeHandler` point). `recorded`: the attempt
   * was already recorded by the commit that handed the row over, so nothing is written before the call.
   */
  | { type: "run-starting"; recorded: boolean }
  /**
   * The handler answered. `jitter` is one draw of the injected random in [0, 1), given only with a
   * not-performed answer, whose backoff decides whether the retry budget's age is spent.
   */
  | { type: "run-answered"; answer: RunAnswer; canLookUp: boolean; jitter?: number | undefined }
  | { type: "lookup-answered"; answer: LookupAnswer }
  /** The owner committed the command it was told. */
  | { type: "owner-accepted"; command: OwnerCommand }
  /** The owner refused it (`CommandRejectedError`): the same code refuses it again. */
  | { type: "owner-rejected"; error: string }
  /** A final outcome could not be recorded (the owner or its journal unreachable); nothing was refused. */
  | { type: "owner-unreachable"; error: string };

/** Why an effect went to the reconciliation queue: the `reason` label of `oncely_effect_escalations_total`. */
export type EscalationReason =
  | "max-attempts"
  | "max-age"
  | "lookups-exhausted"
  | "no-lookup"
  | "input-unreadable"
  | "settlement-refused";

/** An outcome for the owner of the row. */
export interface OwnerCommand {
  command: EffectOutcome;
  /**
   * The row's state while the owner is told (not written): the interpreter holds the row with it,
   * so the next event (rejected, unreachable, accepted) starts from it.
   */
  state: EffectRowState;
  /** For `needs-reconciliation`: why. */
  escalation?: EscalationReason | undefined;
  /** For `unknown`: whether a lookup can resolve it; without one it escalates once the owner heard. */
  canLookUp?: boolean | undefined;
}

/** A delay on `backoff`, `now + backoffDelay(backoff, n, random)`: the interpreter draws the jitter. */
export interface Delay {
  backoff: Backoff;
  n: number;
}

/** A write to the row the dispatcher holds the lease of. */
export interface EffectUpdate {
  status?: OutboxStatus;
  attempts?: number;
  /** A time (epoch ms), or a backoff delay from the transition's `now`. */
  notBefore?: number | Delay;
  lastError?: string;
  /** The row's protocol state (compacted when written). */
  result?: EffectRowState;
  /** Keep the lease (a run is about to start): default release. */
  releaseLease?: boolean;
}

/**
 * What to do next. At most one of `command` and `call`. With a `command`, the owner is told first
 * and its answer is the next event; `update` is then empty. With a `call`, `update` is the record
 * of the attempt, written before the call (unless the event said it is recorded already), and the
 * call's answer is the next event. Otherwise `update`, if any, is written and the step ends.
 */
export interface Transition {
  update?: EffectUpdate;
  command?: OwnerCommand;
  call?: "run" | "lookup";
  /** Counted (stats, metrics): a same-key retry (after an ambiguous or a not-performed answer), or a kind with no handler here. */
  note?: "retried" | "retried-not-performed" | "no-handler";
}
