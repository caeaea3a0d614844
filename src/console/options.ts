import { CONSOLE_DEFAULTS, positiveInteger, positiveMs } from "../base/defaults.js";
import type { Clock, IdGenerator } from "../core/clock.js";
import { resolveEnvironment } from "../core/environment.js";
import { Reconciliation } from "../effects/reconciliation.js";
import type { Settlement } from "../effects/types.js";
import type { ConsoleQueries } from "../journal/console-queries.js";
import type {
  ConsumerStateReader,
  DeadLetterReader,
  DeadLetterStore,
  DocumentReader,
  EventReader,
  EventStore,
  InboxReader,
  JournalAdmin,
  OutboxReader,
  OutboxRow,
  OutboxStore,
  PublishedLog,
} from "../journal/types.js";
import type { PendingCount } from "../messaging/consumer-lag.js";
import { DeadLetters } from "../messaging/dead-letters.js";
import { assertBearerToken } from "./bearer.js";

/** What the console's pages read: no write method. */
export type ConsoleReader = Pick<EventReader, "readStream" | "streamVersion" | "listStreams"> &
  OutboxReader &
  DeadLetterReader &
  Pick<ConsumerStateReader, "getCheckpoint" | "listParked"> &
  Pick<DocumentReader, "listDocuments"> &
  Pick<JournalAdmin, "summarize" | "sliceCount"> &
  // The timeline finds the events an actor's commit appended to the published log itself.
  Pick<PublishedLog, "readPublished"> &
  ConsoleQueries &
  // Wake-ups for the live feed: they change nothing.
  Pick<OutboxStore, "onOutbox"> &
  Pick<PublishedLog, "onPublished">;

/** What the console's actions (settle, replay, discard, gap tools) also write. */
export type ConsoleJournal = ConsoleReader &
  Pick<EventStore, "commit"> &
  InboxReader &
  ConsumerStateReader &
  DocumentReader &
  Pick<OutboxStore, "forceOutbox"> &
  Pick<DeadLetterStore, "resolveDeadLetter">;

export interface ConsoleOptions {
  /** Any journal (every back end's is one); the console uses only what `ConsoleJournal` names. */
  journal: ConsoleJournal;
  /** The bearer token every console request must carry (the application's admin token). */
  token: string;
  /** The reconciliation queue settles go through (default: one over `journal`). */
  reconciliation?: Reconciliation | undefined;
  /**
   * Dead-letter operations. Replay needs the application's consumers registered on it; the
   * default (none) lists, shows and discards, and answers replay with 409 naming what is missing.
   */
  deadLetters?: DeadLetters | undefined;
  /**
   * The application's subscriptions by consumer name: the Consumer lag page and its metrics show
   * each one's `pending()` (NATS: the durable's backlog). Readers of the journal's published log
   * are found in the journal without this.
   */
  subscriptions?: Readonly<Record<string, PendingCount>> | undefined;
  /** Consumers whose parked messages are listed, besides those named by gap alerts and dead letters. */
  consumers?: readonly string[] | undefined;
  /**
   * The application's own rule for a settlement (e.g. "a succeeded payment needs a paymentId"),
   * checked before it is recorded; throw `InvalidInputError` naming the field to refuse it.
   */
  checkSettlement?: ((effect: OutboxRow, settlement: Settlement) => void) | undefined;
  /**
   * How often the live feed looks at the journal while a page listens, and how long a page waits
   * before listening again after its stream dropped (default `CONSOLE_DEFAULTS.pollMs`).
   */
  pollMs?: number | undefined;
  clock?: Clock | undefined;
  ids?: IdGenerator | undefined;
}

/** The options with every default applied, as the routes use them. */
export interface ConsoleContext {
  journal: ConsoleJournal;
  token: string;
  reconciliation: Reconciliation;
  deadLetters: DeadLetters;
  consumers: readonly string[];
  subscriptions: Readonly<Record<string, PendingCount>>;
  checkSettlement: (effect: OutboxRow, settlement: Settlement) => void;
  pollMs: number;
  clock: Clock;
  ids: IdGenerator;
  /** Where the console is mounted, e.g. `/console`. */
  prefix: string;
}

/** A page's view of the context: the journal read-only. */
export type ConsoleView = Omit<ConsoleContext, "journal"> & { readonly journal: ConsoleReader };

export function consoleContext(options: ConsoleOptions, prefix: string): ConsoleContext {
  const { clock, ids } = resolveEnvironment(options);
  return {
    journal: options.journal,
    token: assertBearerToken(options.token, "console token"),
    reconciliation: options.reconciliation ?? new Reconciliation({ journal: options.journal, clock }),
    deadLetters: options.deadLetters ?? new DeadLetters(options.journal, { clock }),
    consumers: options.consumers ?? [],
    subscriptions: options.subscriptions ?? {},
    checkSettlement: options.checkSettlement ?? (() => {}),
    pollMs: positiveMs("console pollMs", options.pollMs ?? CONSOLE_DEFAULTS.pollMs),
    clock,
    ids,
    prefix: prefix.replace(/\/+$/, ""),
  };
}

export const pageSize = positiveInteger("console pageSize", CONSOLE_DEFAULTS.pageSize);
