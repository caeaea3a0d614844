import type { EventReader, EventRecord, SnapshotRecord } from "../journal/types.js";
import type { ActorDefinition } from "./actor.js";
import type { Typed } from "./decider.js";
import type { Logger } from "./logger.js";
import { type SnapshotMetrics, snapshotMetrics } from "./snapshot-metrics.js";
import { type Schemas, UpcastError, upcast, VersionTooNewError } from "./upcast.js";

/**
 * Rebuild an actor: latest usable snapshot, then the tail of its stream through `evolve`.
 * Only `evolve` runs here: recovery never calls a handler or sends anything.
 * A snapshot that fails to load, has another schema version with no migration, or fails
 * validation is ignored and the whole stream is replayed: snapshots only shorten recovery, they
 * never decide it. Every event goes through the actor's upcasters (`readEvent`), so a stream
 * written by older code is read in today's shapes, and one written by newer code stops here.
 */
export async function recover<S>(
  journal: Pick<EventReader, "readFromSnapshot" | "readStream">,
  definition: ActorDefinition<S, Typed, Typed>,
  address: string,
  id: string,
  logger: Logger,
  metrics: SnapshotMetrics = snapshotMetrics(),
): Promise<{ state: S; version: number; fromSnapshot: boolean }> {
  // The snapshot and the events after it come in one read; with no snapshot those events are the
  // stream's first page, which the replay below starts from instead of reading it again.
  let firstPage: EventRecord[] | undefined;
  if (definition.snapshot) {
    try {
      const { snapshot, events } = await journal.readFromSnapshot(address, PAGE);
      if (!snapshot) firstPage = events;
      const base = snapshot ? usableSnapshot(definition, snapshot, metrics) : undefined;
      if (snapshot && base) {
        const rebuilt = await replay(journal, definition, address, base.state, snapshot.version, events);
        return { ...rebuilt, fromSnapshot: true };
      }
    } catch (error) {
      // An event this code cannot read fails the full replay just the same: no second try.
      if (error instanceof UpcastError || error instanceof VersionTooNewError) throw error;
      metrics.ignored.inc({ actor_type: definition.type });
      logger.warn({ address, err: error }, "snapshot unusable, replaying the full stream");
    }
  }
  const rebuilt = await replay(journal, definition, address, definition.initialState(id), 0, firstPage);
  return { ...rebuilt, fromSnapshot: false };
}

/** The snapshot's state in today's shape, or undefined when it is to be ignored (counted). */
function usableSnapshot<S>(
  definition: ActorDefinition<S, Typed, Typed>,
  snapshot: SnapshotRecord,
  metrics: SnapshotMetrics,
): { state: S } | undefined {
  const policy = definition.snapshot;
  if (!policy) return undefined;
  let state: unknown = snapshot.state;
  if (snapshot.schemaVersion !== policy.schemaVersion) {
    // A newer snapshot (written by newer code) is never migrated backwards: ignored.
    const migrated =
      snapshot.schemaVersion < policy.schemaVersion ? policy.migrate?.(state, snapshot.schemaVersion) : undefined;
    if (migrated === undefined) {
      metrics.ignored.inc({ actor_type: definition.type });
      return undefined;
    }
    metrics.migrated.inc({ actor_type: definition.type });
    state = migrated;
  }
  return { state: policy.validate ? policy.validate(state) : (state as S) };
}

/** One stored event of this actor, in the shape its code of today evolves. */
export function readEvent(definition: { events?: Schemas | undefined }, record: EventRecord): Typed {
  return upcast(`actor ${record.stream}`, definition.events, record.type, record.schemaVersion, record.data as Typed, {
    closed: definition.events !== undefined,
  });
}

/** Evolve `state` through stored events (upcast on the way). */
export function evolveRecords<S>(
  definition: ActorDefinition<S, Typed, Typed>,
  state: S,
  records: readonly EventRecord[],
): S {
  let next = state;
  for (const record of records) next = definition.evolve(next, readEvent(definition, record));
  return next;
}

const PAGE = 5_000;

/** Evolve from `fromVersion` page by page; `firstPage`, when given, is the page from there, read already. */
async function replay<S>(
  journal: Pick<EventReader, "readStream">,
  definition: ActorDefinition<S, Typed, Typed>,
  address: string,
  initial: S,
  fromVersion: number,
  firstPage?: EventRecord[],
): Promise<{ state: S; version: number }> {
  let state = initial;
  let version = fromVersion;
  let read = firstPage;
  for (;;) {
    const page = read ?? (await journal.readStream(address, version + 1, PAGE));
    read = undefined;
    state = evolveRecords(definition, state, page);
    version = page.at(-1)?.version ?? version;
    if (page.length < PAGE) return { state, version };
  }
}
