import { type Clock, type IdGenerator, randomIds, systemClock } from "../core/clock.js";
import type { Schemas } from "../core/upcast.js";
import type { Journal } from "../journal/types.js";
import { Consumer, type OrderingMode } from "./consumer.js";
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
  read(journal: Journal, id: string): Promise<V | undefined>;
  /** Read all documents of the collection with their views. */
  readAll(journal: Journal, limit?: number): Promise<{ id: string; view: V }[]>;
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
export async function eventsFromOutbox(journal: Journal, filter: { kind?: string } = {}): Promise<Envelope[]> {
  const rows = await journal.listOutbox({ category: "event", ...filter });
  return rows.map(envelopeFromOutbox);
}

export interface RebuildOptions {
  journal: Journal;
  /** The live consumer's name; the rebuild consumes under `<name>#rebuild-<id>`. */
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
 * Rebuild a projection: delete every document of its collection, then consume the source again
 * through the same consumer machinery (a fresh inbox name so earlier dedup records do not
 * suppress the replay; sequenced mode parks and releases as live consumption would).
 * Stop the live consumer of this collection while rebuilding; returns how many events were handled.
 */
export async function rebuildProjection(options: RebuildOptions): Promise<{ handled: number; consumer: string }> {
  const { journal, projection } = options;
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? randomIds;
  const existing = await journal.listDocuments(projection.collection);
  for (let i = 0; i < existing.length; i += 500) {
    await journal.commit({
      documents: existing.slice(i, i + 500).map((d) => ({ collection: d.collection, id: d.id, doc: null })),
      now: clock.now(),
    });
  }
  const consumer = new Consumer({
    name: `${options.name}#rebuild-${ids.next()}`,
    journal,
    handler: projection as ProjectionHandler<unknown>,
    mode: options.mode ?? "facts",
    ...(options.upcast ? { upcast: options.upcast } : {}),
    clock,
    ids,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
  let handled = 0;
  for await (const envelope of options.events) {
    await consumer.handle(envelope);
    handled++;
  }
  return { handled, consumer: consumer.name };
}
