import type { CheckpointWrite, Journal } from "../journal/types.js";
import type { Decision, PublishRequest } from "./decider.js";

/**
 * The checkpoint "consumer" under which the journal keeps, per source stream (`source/aggregateId`),
 * how many integration events were published on it with a version stamped by the runtime.
 */
export const PUBLISHED_COUNTER = "oncely.published";

/**
 * Published counts an active actor holds, per source stream: the count the journal had when this
 * activation's last commit that advanced it landed. Dropped with the activation (eviction,
 * passivation, reload after a failed or refused commit, slice lost), so a count is never older than
 * the activation's own last commit, and a stale one (someone else published since) is refused by
 * the commit's guard.
 */
export type PublishedCounts = Map<string, number>;

/**
 * Most source streams one activation holds a count for. An actor publishes on its own aggregate
 * almost always; one publishing for many keeps the most recently committed ones and reads the others.
 */
export const HELD_PUBLISHED_SOURCES = 8;

/** Whether a decision publishes an event with no `aggregateVersion` (only then is a count read). */
export const needsStamp = (decision: Decision): boolean =>
  decision.publish?.some((event) => event.aggregateVersion === undefined) ?? false;

/**
 * Stamp every `publish` of a decision that has no `aggregateVersion` with the next positions of
 * its source stream's published sequence (1, 2, 3, … per `source/aggregateId`, the stream a
 * sequenced consumer orders by, with no holes). Not the actor's stream version: an actor does
 * not publish at every event, and a consumer would wait forever for a version never published.
 *
 * The count lives in the journal (a checkpoint of `PUBLISHED_COUNTER` for `source/aggregateId`),
 * and is advanced by the decision's own commit with the count it started from as its guard: a
 * commit racing another for the same count (two actors publishing for one aggregate, or two
 * workers for one actor) fails with `CheckpointConflictError`, and the runtime drops the actor's
 * activation and decides again on a fresh read, so no two events get one version. A publish that
 * gives its own `aggregateVersion` keeps it and does not count: a source stream is numbered by the
 * runtime or by its producer, never both.
 *
 * The count it starts from is `held`'s when the activation holds one (`PublishedCounts`: what its
 * last commit for that source wrote), else a read of the checkpoint: so an active actor reads its
 * count once, at its first publish, and not at every one (a PostgreSQL round trip each, before).
 * `held` is not changed here: the runtime advances it (`holdPublished`) only once the commit landed,
 * so a commit that failed, or whose fate is unknown, leaves nothing advanced in memory (and drops
 * the activation with its counts anyway). A held count gone stale costs one refused commit and a
 * reload, where a read each time cost a round trip each time; both number the same.
 *
 * `assumeUnpublished`: a source with no held count starts from 0, unread. The runtime says so for an
 * actor it holds since its stream was empty, on a command's first attempt: its sources are almost
 * always its own aggregate's, which nobody published on before it. Where someone did (another actor
 * publishing for the same aggregate), the guard (`expected` 0) refuses the commit, and the retry reads.
 */
export async function stampPublished(
  journal: Pick<Journal, "getCheckpoint">,
  decision: Decision,
  held?: ReadonlyMap<string, number>,
  assumeUnpublished = false,
): Promise<{ decision: Decision; counters: CheckpointWrite[] }> {
  const publish = decision.publish ?? [];
  if (!needsStamp(decision)) return { decision, counters: [] };
  const counters = new Map<string, CheckpointWrite>();
  const stamped: PublishRequest[] = [];
  for (const event of publish) {
    if (event.aggregateVersion !== undefined) {
      stamped.push(event);
      continue;
    }
    const source = `${event.source}/${event.aggregateId}`;
    let counter = counters.get(source);
    if (!counter) {
      const published =
        held?.get(source) ?? (assumeUnpublished ? 0 : await journal.getCheckpoint(PUBLISHED_COUNTER, source));
      counter = { consumer: PUBLISHED_COUNTER, source, version: published, expected: published };
      counters.set(source, counter);
    }
    counter.version++;
    stamped.push({ ...event, aggregateVersion: counter.version });
  }
  return { decision: { ...decision, publish: stamped }, counters: [...counters.values()] };
}

/**
 * After a commit carrying `counters` landed: the counts to hold, `held`'s and those it wrote (the
 * journal's now), the most recently written last, at most `HELD_PUBLISHED_SOURCES` of them.
 */
export function holdPublished(
  held: PublishedCounts | undefined,
  counters: readonly CheckpointWrite[],
): PublishedCounts | undefined {
  if (counters.length === 0) return held;
  const counts = held ?? new Map<string, number>();
  for (const { source, version } of counters) {
    counts.delete(source); // re-inserted last: insertion order is recency order
    counts.set(source, version);
  }
  for (const source of counts.keys()) {
    if (counts.size <= HELD_PUBLISHED_SOURCES) break;
    counts.delete(source);
  }
  return counts;
}
