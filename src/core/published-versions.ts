import type { CheckpointWrite, Journal } from "../journal/types.js";
import type { Decision, PublishRequest } from "./decider.js";

/**
 * The checkpoint "consumer" under which the journal keeps, per source stream (`source/aggregateId`),
 * how many integration events were published on it with a version stamped by the runtime.
 */
export const PUBLISHED_COUNTER = "oncely.published";

/**
 * Stamp every `publish` of a decision that has no `aggregateVersion` with the next positions of
 * its source stream's published sequence (1, 2, 3, … per `source/aggregateId`, the stream a
 * sequenced consumer orders by, with no holes). Not the actor's stream version: an actor does
 * not publish at every event, and a consumer would wait forever for a version never published.
 *
 * The count lives in the journal (a checkpoint of `PUBLISHED_COUNTER` for `source/aggregateId`),
 * read here and advanced by the decision's own commit with the read value as its guard: a commit
 * racing another for the same count (two actors publishing for one aggregate, or two workers for
 * one actor) fails with `CheckpointConflictError`, and the runtime decides again on a fresh read,
 * so no two events get one version. A publish that gives its own `aggregateVersion` keeps it and
 * does not count: a source stream is numbered by the runtime or by its producer, never both.
 */
/** Whether a decision publishes an event with no `aggregateVersion` (only then is a count read). */
export const needsStamp = (decision: Decision): boolean =>
  decision.publish?.some((event) => event.aggregateVersion === undefined) ?? false;

export async function stampPublished(
  journal: Pick<Journal, "getCheckpoint">,
  decision: Decision,
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
      const published = await journal.getCheckpoint(PUBLISHED_COUNTER, source);
      counter = { consumer: PUBLISHED_COUNTER, source, version: published, expected: published };
      counters.set(source, counter);
    }
    counter.version++;
    stamped.push({ ...event, aggregateVersion: counter.version });
  }
  return { decision: { ...decision, publish: stamped }, counters: [...counters.values()] };
}
