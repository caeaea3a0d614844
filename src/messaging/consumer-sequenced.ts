import { InvalidInputError } from "../base/errors.js";
import { messageHash, versionConflict } from "./conflicts.js";
import type { ConsumerContext } from "./consumer-context.js";
import { sourceStreamOf } from "./consumer-options.js";
import type { ParkedVersions } from "./consumer-parked-versions.js";
import { applyNext } from "./consumer-sequenced-apply.js";
import { type Envelope, parseEnvelope } from "./envelope.js";
import type { HandleResult } from "./handlers.js";

/**
 * Sequenced mode: a checkpoint per producer stream (`source/aggregateId`). A copy of a handled
 * event is a duplicate; one past a gap is parked in the journal; the next expected version is
 * applied together with the checkpoint advance and its unpark, then parked successors are
 * released in order (see `ParkedVersions`). One handling per source stream at a time in this
 * process; another instance of the consumer is met by the checkpoint's guard and a retry.
 */
export function handleSequenced(
  c: ConsumerContext,
  parking: ParkedVersions,
  envelope: Envelope,
): Promise<HandleResult> {
  if (envelope.aggregateVersion === undefined) {
    return Promise.reject(
      new InvalidInputError(
        `sequenced consumer "${c.name}" got event ${envelope.eventId} (${envelope.type}) without aggregateVersion`,
      ),
    );
  }
  const version = envelope.aggregateVersion;
  const source = sourceStreamOf(envelope);
  return c.locks.run(`src:${source}`, () =>
    c.withConflictRetries(async () => {
      // The checkpoint first, then the inbox: a handled event's inbox row and checkpoint advance
      // are one commit, so a checkpoint past this version (another instance of this consumer, a
      // second worker reading the same log, may just have applied this very event) is always
      // seen with the inbox row that makes it a duplicate. Read the other way round, that commit
      // could land between the two reads and pass for another event's.
      const checkpoint = await c.journal.getCheckpoint(c.name, source);
      if (await c.alreadyHandled(envelope)) {
        // A copy of a handled event applies nothing, but what its first delivery was to release
        // may still wait (that delivery failed or crashed after its apply): release it now.
        return { outcome: "duplicate", released: await parking.releaseParked(source, checkpoint) };
      }
      // Not in the inbox at or below the checkpoint: another event took this version, or an
      // operator skipped it as lost (`skipGap`); either way this copy is recorded, not dropped.
      if (version <= checkpoint) {
        throw versionConflict(c.name, envelope, source, { state: "taken (applied, or skipped past)" });
      }
      const parked = await c.journal.getParked(c.name, source, version);
      if (parked) {
        const held = parseEnvelope(parked.message);
        if (held.eventId !== envelope.eventId || messageHash(held) !== messageHash(envelope)) {
          // The parked one came first and keeps the version; release it if it is due.
          if (version === checkpoint + 1) await parking.releaseParked(source, checkpoint);
          throw versionConflict(c.name, envelope, source, {
            state: "parked",
            eventId: held.eventId,
            envelope: held,
          });
        }
      }
      if (version > checkpoint + 1) return parking.park(envelope, source, version);
      const outcome = await applyNext(c, envelope, source, checkpoint);
      const released = await parking.releaseParked(source, checkpoint + 1);
      return { outcome, released };
    }),
  );
}
