import type { Registry } from "prom-client";
import type { Clock, IdGenerator } from "../core/clock.js";
import type { Typed } from "../core/decider.js";
import type { Faults } from "../core/faults.js";
import type { Logger } from "../core/logger.js";
import type { Runtime, SendOptions } from "../core/runtime.js";
import type { Schemas } from "../core/upcast.js";
import type { ConsumerStateReader, DocumentReader, EventStore, InboxReader, StateReader } from "../journal/types.js";
import type { Envelope } from "./envelope.js";
import type { ReconcileHook } from "./gaps.js";
import type { ConsumerHandler } from "./handlers.js";
import type { MessagingMetrics } from "./metrics.js";
import type { Verifier } from "./signing.js";

export type OrderingMode = "facts" | "sequenced";

/**
 * What a consumer uses of the journal: its inbox, checkpoints and parked messages, the documents
 * its projection and gap alerts keep, and the commit that records each message. `readState` (every
 * `Journal` has it) reads what one delivery needs at once; without it the reads go one by one.
 */
export type ConsumerJournal = Pick<EventStore, "commit"> &
  InboxReader &
  ConsumerStateReader &
  DocumentReader &
  Partial<StateReader>;
/** A router's send (`CommandRouter.send`), as the consumer calls it. */
export type CommandRouterSend = (
  address: string,
  command: Typed,
  options?: SendOptions,
) => Promise<{ reply: unknown; duplicate: boolean }>;

export interface ConsumerOptions {
  /** Durable name: the inbox, checkpoints, parked messages and dead letters are recorded under it. */
  name: string;
  journal: ConsumerJournal;
  handler: ConsumerHandler;
  /** `facts` (default): any order, monotonic updates. `sequenced`: per source stream, in aggregateVersion order. */
  mode?: OrderingMode;
  /** Needed by command handlers (and process managers). */
  runtime?: Runtime;
  /**
   * Where a command handler's commands go instead of `runtime` (a `CommandRouter`, which sends each
   * to the worker owning its actor). Absent: `runtime`.
   */
  commands?: { send: Runtime["send"] | CommandRouterSend };
  /** Event types this consumer handles; others are acknowledged untouched. Default: all. */
  types?: readonly string[];
  clock?: Clock;
  ids?: IdGenerator;
  faults?: Faults;
  logger?: Logger;
  metrics?: MessagingMetrics;
  /** Where the consumer's metrics are registered when `metrics` is not given; a private registry by default. */
  registry?: Registry;
  /**
   * Deliveries before a failing message is dead-lettered (default 5). Terminal errors go at once.
   * Counted from the first delivery of the message that failed in this process, so deliveries
   * spent elsewhere before it (deferred by an older release, see `deferBaseMs`) take nothing from it.
   */
  maxDeliveries?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  /**
   * A message this code cannot read yet (`VersionTooNewError`: a payload written by a newer
   * release, or a command for an actor whose stream a newer release wrote) is left for a newer
   * worker: nak'ed after `deferBaseMs` (default 1 s), doubling per delivery up to `deferMaxMs`
   * (default 30 s). Never dead-lettered for that and never counted against `maxDeliveries`; logged
   * at warn once per message and counted in `oncely_consumer_deferred_total`. The cap is how long
   * a redelivery that lands on an older worker again delays the message (a NATS durable hands it to
   * whichever worker pulls), and on NATS a deferred message holds one of `max_ack_pending` meanwhile.
   */
  deferBaseMs?: number;
  deferMaxMs?: number;
  /** Sequenced: how long a gap may stay open before it is alerted on (default 60 s, clock time). */
  gapTimeoutMs?: number;
  /** Sequenced: called once per alerted gap. */
  reconcile?: ReconcileHook;
  /** Attempts after optimistic-concurrency conflicts with another instance (default 10). */
  maxConflictRetries?: number;
  /**
   * When set, every delivered (and replayed) message must verify (signed by a key accepted for its
   * source, on a subject of that source) before anything else happens; one that does not is
   * dead-lettered with the reason and settled with `term`, never handled.
   */
  verifier?: Verifier | undefined;
  /**
   * Payload schemas per event type (see `core/upcast.ts`): an envelope at an older `schemaVersion`
   * is upcast before the handler sees it; one with no path is dead-lettered (`unreadable-version`),
   * one newer than declared is left for a newer worker (see `deferBaseMs`).
   */
  upcast?: Schemas;
  /** @internal Set by `rebuildProjection`, which holds the collection while it rebuilds it. */
  rebuilding?: boolean;
}

/** The producer stream a sequenced message belongs to: one checkpoint each. */
export const sourceStreamOf = (envelope: Envelope): string => `${envelope.source}/${envelope.aggregateId}`;
