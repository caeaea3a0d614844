/**
 * The journal: the one store behind oncely. Streams of events, snapshots, outbox, inbox,
 * checkpoints, parked messages, dead letters, read-model documents and the published log of
 * integration events (the journal transport's).
 *
 * Its contract is split by role, one file each under `roles/` (event store, outbox, inbox,
 * consumer state, state reads, dead letters, published log, documents, admin); `Journal` is all of them.
 * Every back end (in-memory, SQLite, PostgreSQL) implements `Journal` and passes
 * `journalConformance` in `src/journal/conformance.ts`. The core reaches a journal only through
 * these interfaces (plus the back-end-neutral helpers `rows.ts` and `outcome-record.ts`), never a
 * back end.
 *
 * Times are epoch milliseconds taken from the injected clock by the caller: the journal never
 * reads a clock of its own, so simulation stays deterministic.
 */

// A type-only import: the console's queries are a role of the journal, declared in their own file.
import type { ConsoleQueries } from "./console-queries.js";
import type { JournalAdmin } from "./roles/admin.js";
import type { ConsumerState, ConsumerStateReader } from "./roles/consumer-state.js";
import type { DeadLetterReader, DeadLetterStore } from "./roles/dead-letters.js";
import type { DocumentReader } from "./roles/documents.js";
import type { EventReader, EventStore } from "./roles/event-store.js";
import type { InboxReader, InboxStore } from "./roles/inbox.js";
import type { OutboxReader, OutboxStore } from "./roles/outbox-store.js";
import type { PublishedLog, PublishedLogReader } from "./roles/published-log.js";
import type { StateReader } from "./roles/state-reads.js";

export type * from "./roles/admin.js";
export type * from "./roles/consumer-state.js";
export type * from "./roles/dead-letters.js";
export type * from "./roles/documents.js";
export type * from "./roles/event-store.js";
export type * from "./roles/inbox.js";
export type * from "./roles/outbox-store.js";
export type * from "./roles/published-log.js";
export type * from "./roles/state-reads.js";

/**
 * The whole journal: every role. A back end implements all of it; a component asks only for the
 * roles it uses (`EventStore & InboxReader`, `Pick<OutboxStore, "pruneOutbox">`), so its options
 * say what it touches and a test can hand it a smaller store. See docs/design/journal-roles.md.
 */
export interface Journal
  extends EventStore,
    OutboxStore,
    InboxStore,
    ConsumerState,
    StateReader,
    DeadLetterStore,
    PublishedLog,
    DocumentReader,
    JournalAdmin,
    ConsoleQueries {}

/**
 * The journal without its writes: what a read-only view (the console's pages, a status query)
 * asks for. It cannot commit, claim, update, prune, resolve, forget, migrate or close.
 */
export interface JournalReader
  extends EventReader,
    OutboxReader,
    InboxReader,
    ConsumerStateReader,
    StateReader,
    DeadLetterReader,
    PublishedLogReader,
    DocumentReader,
    Pick<JournalAdmin, "backend" | "summarize"> {}
