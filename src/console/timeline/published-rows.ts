import { parseAddress } from "../../core/address.js";
import { DEFAULT_SLICE_COUNT, sliceOf } from "../../core/slices.js";
import type { EventRecord, JournalAdmin, OutboxRow, PublishedLogReader } from "../../journal/types.js";
import { decodeEnvelope, type Envelope } from "../../messaging/envelope.js";

/**
 * Integration events an actor's own commits appended to the published log (the journal
 * transport's publish at commit, which writes no outbox row), as the event rows the timeline
 * draws (done, `published`). An envelope does not name its producing stream, so an entry is given
 * to the actor whose events of the same commit carry its causation id and time (`buildCommit`
 * stamps both from the command); one published by a decision that appended no event, or under
 * another aggregate id than the actor's, is not found. Reads the log's slice of each actor's id
 * (the entries' key is the producing aggregate's id), at most `limit` entries from the oldest
 * retained: a best effort for a drawing, never a hot path.
 */
export async function publishedAtCommitRows(
  journal: Pick<PublishedLogReader, "readPublished"> & Pick<JournalAdmin, "sliceCount">,
  actors: readonly { stream: string; events: readonly EventRecord[]; published: readonly OutboxRow[] }[],
  limit: number,
): Promise<Map<string, OutboxRow[]>> {
  const found = new Map<string, OutboxRow[]>();
  const count = journal.sliceCount ?? DEFAULT_SLICE_COUNT;
  /** `causationId \0 time` of each actor's commits -> the actor's stream. */
  const commits = new Map<string, string>();
  const slices = new Set<number>();
  const known = new Set<string>();
  for (const actor of actors) {
    for (const row of actor.published) known.add(row.id);
    for (const e of actor.events)
      if (e.causationId !== null) commits.set(`${e.causationId}\0${e.recordedAt}`, actor.stream);
    slices.add(sliceOf(parseAddress(actor.stream).id, count));
  }
  if (commits.size === 0) return found;
  for (const entry of await journal.readPublished(0, limit, [...slices])) {
    const envelope = envelopeOf(entry.body);
    if (!envelope || known.has(envelope.eventId)) continue;
    const stream = commits.get(`${envelope.causationId}\0${Date.parse(envelope.occurredAt)}`);
    if (stream === undefined) continue;
    known.add(envelope.eventId);
    const rows = found.get(stream) ?? [];
    rows.push(rowOf(envelope, stream, entry.publishedAt, entry.position));
    found.set(stream, rows);
  }
  return found;
}

function envelopeOf(body: string): Envelope | undefined {
  try {
    return decodeEnvelope(body);
  } catch {
    return undefined; // not an envelope (a foreign publisher's entry): nothing to draw
  }
}

const rowOf = (envelope: Envelope, stream: string, at: number, position: number): OutboxRow => ({
  id: envelope.eventId,
  category: "event",
  kind: envelope.type,
  stream,
  payload: envelope,
  notBefore: at,
  status: "done",
  attempts: 0,
  leaseOwner: null,
  leaseUntil: null,
  lastError: null,
  outcome: "published",
  result: null,
  createdAt: at,
  updatedAt: at,
  seq: position,
});
