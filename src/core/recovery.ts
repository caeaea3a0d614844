import type { Journal } from "../journal/types.js";
import type { ActorDefinition } from "./actor.js";
import type { Typed } from "./decider.js";
import type { Logger } from "./logger.js";

/**
 * Rebuild an actor: latest usable snapshot, then the tail of its stream through `evolve`.
 * Only `evolve` runs here: recovery never calls a handler or sends anything.
 * A snapshot that fails to load, has another schema version, or fails validation is ignored
 * and the whole stream is replayed: snapshots only shorten recovery, they never decide it.
 */
export async function recover<S>(
  journal: Journal,
  definition: ActorDefinition<S, Typed, Typed>,
  address: string,
  id: string,
  logger: Logger,
): Promise<{ state: S; version: number; fromSnapshot: boolean }> {
  const policy = definition.snapshot;
  if (policy) {
    try {
      const snapshot = await journal.latestSnapshot(address);
      if (snapshot && snapshot.schemaVersion === policy.schemaVersion) {
        const base = policy.validate ? policy.validate(snapshot.state) : (snapshot.state as S);
        const rebuilt = await replay(journal, definition, address, base, snapshot.version);
        return { ...rebuilt, fromSnapshot: true };
      }
    } catch (error) {
      logger.warn({ address, err: error }, "snapshot unusable, replaying the full stream");
    }
  }
  const rebuilt = await replay(journal, definition, address, definition.initialState(id), 0);
  return { ...rebuilt, fromSnapshot: false };
}

const PAGE = 5_000;

async function replay<S>(
  journal: Journal,
  definition: ActorDefinition<S, Typed, Typed>,
  address: string,
  initial: S,
  fromVersion: number,
): Promise<{ state: S; version: number }> {
  let state = initial;
  let version = fromVersion;
  for (;;) {
    const page = await journal.readStream(address, version + 1, PAGE);
    for (const record of page) {
      state = definition.evolve(state, record.data as Typed);
      version = record.version;
    }
    if (page.length < PAGE) return { state, version };
  }
}
