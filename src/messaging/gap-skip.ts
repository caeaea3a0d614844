import type { ConsumerStateReader, DocumentReader, EventStore, ParkedRecord } from "../journal/types.js";
import { gapResolutionDocument } from "./gaps.js";

/** What a skip did: the versions given up as lost, and whether a gap alert was marked `skipped`. */
export interface SkippedGap {
  consumer: string;
  source: string;
  /** First skipped version (the checkpoint + 1 it found). */
  from: number;
  /** Last skipped version: the checkpoint now, just below the first parked version. */
  to: number;
  /** The parked versions the consumer's release applies next. */
  parkedVersions: number[];
  alertMarked: boolean;
}

/** The versions parked past the checkpoint, lowest first (rows at or below it are stale). */
export async function liveParked(
  journal: Pick<ConsumerStateReader, "listParked">,
  consumer: string,
  source: string,
  checkpoint: number,
) {
  const parked = await journal.listParked(consumer, source);
  return parked.filter((p: ParkedRecord) => p.version > checkpoint).sort((a, b) => a.version - b.version);
}

/** What skipping a gap uses of the journal: the checkpoint and parked versions, the alert, one commit. */
export type GapSkipJournal = Pick<EventStore, "commit"> &
  Pick<ConsumerStateReader, "getCheckpoint" | "listParked"> &
  Pick<DocumentReader, "getDocument">;

/**
 * One attempt at skipping the open gap of `source`: the checkpoint moves to just below the first
 * parked version, guarded by the checkpoint read (`CheckpointConflictError` when another
 * instance moved it meanwhile: read again and retry), and the gap's alert, if it was raised, is
 * marked `skipped` in the same commit with a note naming the versions (and the operator, when
 * one is given). Undefined when there is no gap (nothing parked, or the next version is parked
 * and only waits for its release). Releasing what was parked is the caller's part: the consumer
 * does it at once, and for the operator tools its next gap check does.
 */
export async function commitGapSkip(
  journal: GapSkipJournal,
  gap: { consumer: string; source: string; by?: string | undefined; note?: string | null | undefined; now: number },
): Promise<SkippedGap | undefined> {
  const { consumer, source, now } = gap;
  const checkpoint = await journal.getCheckpoint(consumer, source);
  const parked = await liveParked(journal, consumer, source, checkpoint);
  const first = parked[0];
  if (!first || first.version === checkpoint + 1) return undefined;
  const from = checkpoint + 1;
  const to = first.version - 1;
  const by = gap.by ? ` by ${gap.by}` : "";
  const why = gap.note?.trim() ? `: ${gap.note.trim()}` : "";
  const note = `versions ${from}..${to} skipped${by}${why}`;
  const alert = await gapResolutionDocument(journal, { consumer, source, fromVersion: from }, "skipped", note, now);
  await journal.commit({
    checkpoint: { consumer, source, version: to, expected: checkpoint },
    documents: alert ? [alert] : [],
    now,
  });
  return { consumer, source, from, to, parkedVersions: parked.map((p) => p.version), alertMarked: Boolean(alert) };
}
