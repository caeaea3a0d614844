import type { CheckpointWrite, Journal } from "../journal/types.js";
import type { Decision } from "./decider.js";

/**
 * The checkpoint "consumer" under which the journal keeps, per actor address, how many integration
 * events that actor has published with a version stamped by the runtime.
 */
export const PUBLISHED_COUNTER = "oncely.published";

/**
 * Stamp every `publish` of a decision that has no `aggregateVersion` with the next positions of
 * its actor's published sequence (1, 2, 3, … per address, with no holes), which is what a
 * sequenced consumer orders by. Not the stream version: an actor does not publish at every
 * event, and a consumer would wait forever for a version never published.
 *
 * The count lives in the journal (a checkpoint of `PUBLISHED_COUNTER` for the address), read here
 * and advanced by the decision's own commit with the read value as its guard: a commit racing
 * another for the same count fails with `CheckpointConflictError`, and the runtime decides again
 * on a fresh read, so no two events get one version. A publish that gives its own
 * `aggregateVersion` keeps it and does not count: an actor numbers all of its publishes itself, or
 * none.
 */
export async function stampPublished(
  journal: Pick<Journal, "getCheckpoint">,
  address: string,
  decision: Decision,
): Promise<{ decision: Decision; counter?: CheckpointWrite }> {
  const publish = decision.publish ?? [];
  if (!publish.some((event) => event.aggregateVersion === undefined)) return { decision };
  const published = await journal.getCheckpoint(PUBLISHED_COUNTER, address);
  let next = published;
  const stamped = publish.map((event) =>
    event.aggregateVersion === undefined ? { ...event, aggregateVersion: ++next } : event,
  );
  return {
    decision: { ...decision, publish: stamped },
    counter: { consumer: PUBLISHED_COUNTER, source: address, version: next, expected: published },
  };
}
