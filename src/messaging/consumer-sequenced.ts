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
      // The checkpoint, the inbox row and what is parked at this version, in one read: one round
      // trip, and one view of the journal where the journal gives one (`readState`). Read one by
      // one (a smaller journal), the checkpoint comes first: a handled event's inbox row and
      // checkpoint advance are one commit, so a checkpoint past this version (another instance
      // of this consumer, a second worker reading the same log, may just have applied this very
      // event) is always seen with the inbox row that makes it a duplicate. Read the other way
      // round, that commit could land between the two reads and pass for another event's.
      const state = await c.read({
        checkpoints: [{ consumer: c.name, source }],
        inbox: [{ consumer: c.name, messageId: envelope.eventId }],
        parked: [{ consumer: c.name, source, version }],
      });
      const checkpoint = state.checkpoints[0] ?? 0;
      if (c.handledAs(envelope, state.inbox[0])) {
        // A copy of a handled event applies nothing, but what its first delivery was to release
        // may still wait (that delivery failed or crashed after its apply): release it now.
        return { outcome: "duplicate", released: await parking.releaseParked(source, checkpoint) };
      }
      // Not in the inbox at or below the checkpoint: another event took this version, or an
      // operator skipped it as lost (`skipGap`); either way this copy is recorded, not dropped.
      if (version <= checkpoint) {
        throw versionConflict(c.name, envelope, source, { state: "taken (applied, or skipped past)" });
      }
      const parked = state.parked[0];
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
