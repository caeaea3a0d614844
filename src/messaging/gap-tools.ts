import { CheckpointConflictError, InvalidInputError, RetriesExhaustedError } from "../base/errors.js";
import type { Clock } from "../core/clock.js";
import type {
  ConsumerStateReader,
  DeadLetterReader,
  DocumentReader,
  EventStore,
  InboxReader,
  ParkedRecord,
} from "../journal/types.js";
import { sourceStreamOf } from "./consumer-options.js";
import { parseEnvelope } from "./envelope.js";
import { commitGapSkip, type GapSkipJournal, liveParked, type SkippedGap } from "./gap-skip.js";
import { GAP_ALERTS, type GapAlert, gapAlertId } from "./gaps.js";

export type { SkippedGap } from "./gap-skip.js";

/**
 * Operator tools for the gaps of sequenced consumers, working on the journal alone: the CLI and
 * the console have no consumer (its handler is the application's code). A skip moves the
 * checkpoint and a supplied event is parked at its version; the running consumer's next gap
 * check (`GapMonitor.check`, every few seconds under a host) releases what is then next, through
 * the normal path (inbox, checkpoint, the versions parked behind it).
 */

/** One source of a consumer with messages parked past its checkpoint. */
export interface ParkedGap {
  consumer: string;
  source: string;
  checkpoint: number;
  /** First missing version: checkpoint + 1. */
  firstMissing: number;
  /** Last missing version, just below the first parked one; below `firstMissing` when nothing is missing. */
  lastMissing: number;
  parkedVersions: number[];
  /** When the earliest of them was parked (clock ms). */
  oldestParkedAt: number;
  /**
   * No version is missing: the next one is parked and waits for its release (the consumer's next
   * gap check releases it). Nothing to skip or supply.
   */
  releasable: boolean;
  /** The alert raised on this gap (same first missing version), if any. */
  alert: GapAlert | null;
}

/**
 * Open gaps, per consumer and source. The journal lists parked messages per consumer, so without
 * `consumer` the consumers looked at are `consumers` plus those named by gap alerts and dead
 * letters: a gap younger than its consumer's alert timeout, of a consumer never alerted on, shows
 * only when its consumer is named.
 */
export async function listGaps(
  journal: Pick<DocumentReader, "listDocuments"> &
    Pick<DeadLetterReader, "listDeadLetters"> &
    Pick<ConsumerStateReader, "listParked" | "getCheckpoint">,
  options: { consumer?: string | undefined; consumers?: readonly string[] | undefined } = {},
): Promise<ParkedGap[]> {
  const alerts = (await journal.listDocuments(GAP_ALERTS)).map((d) => d.doc as GapAlert);
  const names = options.consumer
    ? [options.consumer]
    : [
        ...new Set([
          ...(options.consumers ?? []),
          ...alerts.map((a) => a.consumer),
          ...(await journal.listDeadLetters({})).map((d) => d.consumer),
        ]),
      ].sort();
  const alertsById = new Map(alerts.map((a) => [gapAlertId(a.consumer, a.source, a.fromVersion), a]));
  const gaps: ParkedGap[] = [];
  for (const consumer of names) {
    const bySource = new Map<string, ParkedRecord[]>();
    for (const p of await journal.listParked(consumer)) bySource.set(p.source, [...(bySource.get(p.source) ?? []), p]);
    for (const source of [...bySource.keys()].sort()) {
      const checkpoint = await journal.getCheckpoint(consumer, source);
      const live = (bySource.get(source) ?? [])
        .filter((p) => p.version > checkpoint)
        .sort((a, b) => a.version - b.version);
      const first = live[0];
      if (!first) continue; // only stale rows, which the next gap check removes
      gaps.push({
        consumer,
        source,
        checkpoint,
        firstMissing: checkpoint + 1,
        lastMissing: first.version - 1,
        parkedVersions: live.map((p) => p.version),
        oldestParkedAt: Math.min(...live.map((p) => p.parkedAt)),
        releasable: first.version === checkpoint + 1,
        alert: alertsById.get(gapAlertId(consumer, source, checkpoint + 1)) ?? null,
      });
    }
  }
  return gaps;
}

/** Who takes an operator action, and why (kept on the alert and in the operator-actions record). */
export interface GapOperator {
  by: string;
  note?: string | null | undefined;
  clock: Clock;
}

/** Attempts when the consumer moves the checkpoint between our read and our guarded commit. */
const SKIP_ATTEMPTS = 5;

function requireOperator(by: string): void {
  if (by.trim() === "") throw new InvalidInputError("the operator's name is required (who takes the action)");
}

/**
 * Give up the missing versions of a gap as lost for good: the checkpoint moves to just below the
 * first parked version (a guarded commit, retried when the running consumer moved it meanwhile)
 * and the gap's alert, if raised, is marked `skipped` with the operator and the versions, in the
 * same commit. The running consumer's next gap check releases the parked versions. Refused
 * (`InvalidInputError`) when nothing is parked for the source or nothing is missing.
 *
 * Failure window: none between the checkpoint and the alert (one commit); a crash after it leaves
 * the parked versions to the next gap check, which releases them.
 */
export async function skipGap(
  journal: GapSkipJournal,
  options: GapOperator & { consumer: string; source: string },
): Promise<SkippedGap> {
  requireOperator(options.by);
  const { consumer, source } = options;
  for (let attempt = 1; attempt <= SKIP_ATTEMPTS; attempt++) {
    try {
      const skipped = await commitGapSkip(journal, {
        consumer,
        source,
        by: options.by.trim(),
        note: options.note,
        now: options.clock.now(),
      });
      if (skipped) return skipped;
      throw new InvalidInputError(await noGapReason(journal, consumer, source));
    } catch (error) {
      if (!(error instanceof CheckpointConflictError)) throw error;
    }
  }
  throw new RetriesExhaustedError(
    `skipping the gap of "${consumer}" on "${source}": the consumer kept moving its checkpoint; try again`,
    SKIP_ATTEMPTS,
  );
}

async function noGapReason(
  journal: Pick<ConsumerStateReader, "getCheckpoint" | "listParked">,
  consumer: string,
  source: string,
): Promise<string> {
  const checkpoint = await journal.getCheckpoint(consumer, source);
  const first = (await liveParked(journal, consumer, source, checkpoint))[0];
  if (!first) {
    return `no gap: consumer "${consumer}" has nothing parked for source "${source}" past its checkpoint ${checkpoint}`;
  }
  return (
    `no gap: consumer "${consumer}" on "${source}" misses no version (checkpoint ${checkpoint}, ` +
    `version ${first.version} is parked next and is released at the consumer's next gap check)`
  );
}

/** The runs of versions missing between the checkpoint and the highest parked version. */
function missingRuns(checkpoint: number, parked: readonly number[]): { from: number; to: number }[] {
  const runs: { from: number; to: number }[] = [];
  let next = checkpoint + 1;
  for (const version of parked) {
    if (version > next) runs.push({ from: next, to: version - 1 });
    next = version + 1;
  }
  return runs;
}

/** What a supply did: the event, parked at its version, for the consumer's release to apply. */
export interface SuppliedGapEvent {
  consumer: string;
  source: string;
  version: number;
  eventId: string;
  /** The run of missing versions it belongs to, as found (between the checkpoint and a parked version). */
  gap: { from: number; to: number };
}

/**
 * Supply one missing event of a gap (e.g. fetched from the producer): validated as an envelope,
 * and accepted only when its `aggregateVersion` is missing in its source stream (past the
 * checkpoint, below a parked version, nothing parked at it) and the consumer has not handled its
 * eventId. Several missing versions can be supplied one after the other before the consumer's
 * next gap check, each parked until the ones before it are in. It is parked at
 * its version, so the consumer's release applies it through the normal path (handler, inbox,
 * checkpoint) and then what is parked behind it: at once when it is the next version (at the
 * consumer's next gap check), else once the versions before it are supplied or skipped.
 *
 * A supplied event does not pass the consumer's verifier (the release path does not verify; the
 * operator vouches for it, and the action is recorded with their name). Failure window: another
 * message parked at the same version between our check and our park keeps the version (a park
 * never overwrites); that is detected after the commit and refused.
 */
export async function supplyGapEvent(
  journal: Pick<EventStore, "commit"> & InboxReader & ConsumerStateReader,
  options: GapOperator & { consumer: string; envelope: unknown },
): Promise<SuppliedGapEvent> {
  requireOperator(options.by);
  const { consumer } = options;
  const envelope = parseEnvelope(options.envelope);
  const version = envelope.aggregateVersion;
  if (version === undefined) {
    throw new InvalidInputError(
      `event ${envelope.eventId} has no aggregateVersion: a sequenced consumer's gap takes versioned events only`,
    );
  }
  const source = sourceStreamOf(envelope);
  const checkpoint = await journal.getCheckpoint(consumer, source);
  const parked = await liveParked(journal, consumer, source, checkpoint);
  const missing = missingRuns(
    checkpoint,
    parked.map((p) => p.version),
  );
  if (missing.length === 0) throw new InvalidInputError(await noGapReason(journal, consumer, source));
  const runs = missing.map((r) => `${r.from}..${r.to}`).join(", ");
  if (parked.some((p) => p.version === version)) {
    throw new InvalidInputError(
      `consumer "${consumer}" already has a message parked at version ${version} of "${source}" (missing: ${runs})`,
    );
  }
  const gap = missing.find((r) => r.from <= version && version <= r.to);
  if (!gap) {
    const where =
      version <= checkpoint
        ? `version ${version} is taken: the checkpoint is ${checkpoint}`
        : `nothing is parked past version ${version}`;
    throw new InvalidInputError(
      `event ${envelope.eventId} is version ${version} of "${source}", not a missing version of consumer "${consumer}" ` +
        `(missing: ${runs}; ${where})`,
    );
  }
  if (await journal.getInbox(consumer, envelope.eventId)) {
    throw new InvalidInputError(
      `consumer "${consumer}" has handled event ${envelope.eventId} already (under another version): supply the missing event itself`,
    );
  }
  await journal.commit({
    park: [{ consumer, source, version, message: envelope }],
    now: options.clock.now(),
  });
  const held = await journal.getParked(consumer, source, version);
  if (held && parseEnvelope(held.message).eventId !== envelope.eventId) {
    throw new InvalidInputError(
      `another message (event ${parseEnvelope(held.message).eventId}) was parked at version ${version} of "${source}" meanwhile; ` +
        "it keeps the version",
    );
  }
  return { consumer, source, version, eventId: envelope.eventId, gap };
}
