import type { Clock, IdGenerator } from "../core/clock.js";
import { resolveEnvironment } from "../core/environment.js";
import type { Schemas } from "../core/upcast.js";
import type { ConsumerState, DocumentReader, ForgottenConsumer, OutboxReader } from "../journal/types.js";
import { setOwner } from "./collection-owners.js";
import { Consumer } from "./consumer.js";
import type { ConsumerJournal, OrderingMode } from "./consumer-options.js";
import { type Envelope, envelopeFromOutbox } from "./envelope.js";
import type { ProjectionHandler, ProjectTools } from "./handlers.js";
import type { MessagingMetrics } from "./metrics.js";

export interface ProjectionDefinition<D, V = D> {
  collection: string;
  key(envelope: Envelope): string | undefined;
  /** Commutative, monotonic update (`shipped = true`); `undefined` = no change, `null` = delete. */
  project(doc: D | undefined, envelope: Envelope, tools: ProjectTools): D | null | undefined;
  /** Computed at query time from the stored facts (a summary status is never stored). */
  view?(doc: D, id: string): V;
}

export interface Projection<D, V = D> extends ProjectionHandler<D> {
  /** Read one document with its query-time view. */
  read(journal: Pick<DocumentReader, "getDocument">, id: string): Promise<V | undefined>;
  /** Read all documents of the collection with their views. */
  readAll(journal: Pick<DocumentReader, "listDocuments">, limit?: number): Promise<{ id: string; view: V }[]>;
}

/** A read-model projection usable as a consumer handler, with query-time views. */
export function defineProjection<D, V = D>(definition: ProjectionDefinition<D, V>): Projection<D, V> {
  const view = (doc: D, id: string): V => (definition.view ? definition.view(doc, id) : (doc as unknown as V));
  return {
    kind: "projection",
    collection: definition.collection,
    key: definition.key,
    project: definition.project,
    async read(journal, id) {
      const record = await journal.getDocument(definition.collection, id);
      return record ? view(record.doc as D, id) : undefined;
    },
    async readAll(journal, limit) {
      const records = await journal.listDocuments(definition.collection, limit);
      return records.map((r) => ({ id: r.id, view: view(r.doc as D, r.id) }));
    },
  };
}

/**
 * The integration events committed in this journal's outbox (any status: a pending row is
 * committed too), in commit order: a source for rebuilding a projection from scratch.
 */
export async function eventsFromOutbox(
  journal: Pick<OutboxReader, "listOutbox">,
  filter: { kind?: string } = {},
): Promise<Envelope[]> {
  const rows = await journal.listOutbox({ category: "event", ...filter });
  return rows.map(envelopeFromOutbox);
}

export interface RebuildOptions {
  /** A consumer's journal that can also forget what the consumer handled. */
  journal: ConsumerJournal & Pick<ConsumerState, "forgetConsumer">;
  /**
   * The live consumer's name. The rebuild consumes under it: what it handles is recorded as that
   * consumer's, so when the live consumer starts again its backlog is duplicates, never applied twice.
   */
  name: string;
  projection: ProjectionHandler<unknown> | ProjectionHandler<never>;
  events: Iterable<Envelope> | AsyncIterable<Envelope>;
  mode?: OrderingMode;
  /** Payload schemas, as the live consumer's `upcast`: events stored at older versions are read as today's. */
  upcast?: Schemas;
  clock?: Clock;
  ids?: IdGenerator;
  metrics?: MessagingMetrics;
}

/**
 * Rebuild a projection in place, under the live consumer's own name: take the collection over
 * (marked `rebuilding`, so no consumer writes it meanwhile), delete its documents, forget what the
 * consumer had handled (its inbox, checkpoints and parked messages; its position in the published
 * log stays), consume `events` again through the same machinery (sequenced mode parks and
 * releases as live consumption would), then hand the collection back to that name. The live
 * consumer, started again, finds everything the rebuild handled in its inbox: its backlog is
 * duplicates, never applied twice. Stop the live consumer everywhere while rebuilding.
 *
 * `events` must hold every event the consumer had handled (`eventsFromOutbox(journal)` does for
 * events of this journal). Failure window: a rebuild that stops half way leaves the collection
 * marked `rebuilding`, and the live consumer refuses to write it (`CollectionOwnedError`) until a
 * rebuild runs to the end.
 */
export async function rebuildProjection(
  options: RebuildOptions,
): Promise<{ handled: number; consumer: string; forgotten: ForgottenConsumer }> {
  const { journal, projection, name } = options;
  const { clock, ids } = resolveEnvironment(options);
  const collection = projection.collection;
  await setOwner(journal, collection, { consumer: name, since: clock.now(), rebuilding: true }, clock.now());
  const existing = await journal.listDocuments(collection);
  for (let i = 0; i < existing.length; i += 500) {
    await journal.commit({
      documents: existing.slice(i, i + 500).map((d) => ({ collection: d.collection, id: d.id, doc: null })),
      now: clock.now(),
    });
  }
  const forgotten = await journal.forgetConsumer(name, { keepReader: true });
  const consumer = new Consumer({
    name,
    journal,
    handler: projection as ProjectionHandler<unknown>,
    mode: options.mode ?? "facts",
    ...(options.upcast ? { upcast: options.upcast } : {}),
    clock,
    ids,
    ...(options.metrics ? { metrics: options.metrics } : {}),
    rebuilding: true,
  });
  let handled = 0;
  for await (const envelope of options.events) {
    await consumer.handle(envelope);
    handled++;
  }
  await setOwner(journal, collection, { consumer: name, since: clock.now(), rebuilding: false }, clock.now());
  return { handled, consumer: name, forgotten };
}
