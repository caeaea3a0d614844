import { CheckpointConflictError, isRetryable, ReleaseFailedError, StorageUnavailableError } from "../base/errors.js";
import { VersionTooNewError } from "../core/upcast.js";
import { versionConflict } from "./conflicts.js";
import type { ConsumerContext } from "./consumer-context.js";
import { writeDeadLetter } from "./consumer-dead-letter.js";
import { applyNext } from "./consumer-sequenced-apply.js";
import { type Envelope, encodeEnvelope, parseEnvelope } from "./envelope.js";
import { commitGapSkip } from "./gap-skip.js";
import type { HandleResult } from "./handlers.js";

/**
 * Sequenced mode: the versions that arrived ahead of a gap, parked in the journal, and their
 * release in order once the gap fills (or is skipped). Holds, per eventId, the failed attempts of
 * parked versions being released, so that each counts its own failures.
 */
export class ParkedVersions {
  /** Failed attempts of parked versions being released, by eventId (see `releaseParked`). */
  private readonly releaseFailures = new Map<string, number>();

  constructor(private readonly c: ConsumerContext) {}

  /**
   * Park a version that arrived ahead of a gap: in the journal (not in memory), so a restart loses
   * nothing; parking the same version twice is a no-op. Another instance may have moved the
   * checkpoint after our read: read it again after the park. Just below this version, this
   * instance releases at once rather than at the next gap check; at or past it, the row just
   * written is stale and goes, and the copy is a duplicate or a conflict as on the direct path.
   */
  async park(envelope: Envelope, source: string, version: number): Promise<HandleResult> {
    const c = this.c;
    await c.journal.commit({
      park: [{ consumer: c.name, source, version, message: envelope }],
      now: c.clock.now(),
    });
    const checkpoint = await c.journal.getCheckpoint(c.name, source);
    if (checkpoint === version - 1)
      return { outcome: "parked", released: await this.releaseParked(source, checkpoint) };
    if (checkpoint < version) return { outcome: "parked", released: 0 };
    await c.journal.commit({ unpark: [{ consumer: c.name, source, version }], now: c.clock.now() });
    if (await c.alreadyHandled(envelope)) return { outcome: "duplicate", released: 0 };
    throw versionConflict(c.name, envelope, source, { state: "taken (applied, or skipped past)" });
  }

  /**
   * Apply parked successors in order while the next expected version is among them: one point read
   * per step, however many are parked. Call under the source lock.
   *
   * A released version is handled as a delivery of its own: a failure is charged to it, not to the
   * message that released it. A terminal failure, or a retryable one that has failed
   * `maxDeliveries` times, makes it a dead letter of its own (its own body, unparked in the same
   * commit) and the sequence holds at its version, to be alerted on as a gap; a retryable failure
   * below that count throws `ReleaseFailedError` (retryable) so that the delivery or gap check that
   * released it tries again later. A version this code cannot read yet stays parked for a newer
   * worker. The journal being unreachable, or another instance moving the checkpoint, propagate.
   */
  async releaseParked(source: string, known?: number): Promise<number> {
    const c = this.c;
    let released = 0;
    // The checkpoint the caller just read or committed, then the one each applied step commits: one
    // read per step. Should another instance have moved it meanwhile, the step's guarded commit is
    // refused and the caller's conflict retry reads it again.
    let at = known;
    for (;;) {
      const checkpoint = at ?? (await c.journal.getCheckpoint(c.name, source));
      const next = await c.journal.getParked(c.name, source, checkpoint + 1);
      if (!next) return released;
      const envelope = parseEnvelope(next.message);
      try {
        await applyNext(c, envelope, source, checkpoint);
        this.releaseFailures.delete(envelope.eventId);
        at = checkpoint + 1;
      } catch (error) {
        if (error instanceof StorageUnavailableError || error instanceof CheckpointConflictError) throw error;
        if (error instanceof VersionTooNewError) {
          c.metrics.deferred.inc({ consumer: c.name, reason: "version-too-new" });
          c.logger.warn(
            { consumer: c.name, source, version: checkpoint + 1, eventId: envelope.eventId, err: error },
            "parked version left for a newer worker",
          );
          return released;
        }
        const attempts = (this.releaseFailures.get(envelope.eventId) ?? 0) + 1;
        if (isRetryable(error) && attempts < c.maxDeliveries) {
          this.releaseFailures.set(envelope.eventId, attempts);
          c.metrics.handled.inc({ consumer: c.name, outcome: "retry" });
          c.logger.warn(
            { consumer: c.name, source, version: checkpoint + 1, eventId: envelope.eventId, attempts, err: error },
            "released version failed; will retry",
          );
          throw new ReleaseFailedError(c.name, source, checkpoint + 1, error);
        }
        this.releaseFailures.delete(envelope.eventId);
        await this.deadLetterParked(envelope, source, checkpoint + 1, error, attempts);
        return released;
      }
      released++;
      c.counts.released.inc();
    }
  }

  /** A released version that failed: its own dead letter, unparked in the same commit. */
  private async deadLetterParked(
    envelope: Envelope,
    source: string,
    version: number,
    error: unknown,
    attempts: number,
  ): Promise<void> {
    // No subject: it arrived long before, and replay verifies the signature alone.
    const message = { subject: null, body: encodeEnvelope(envelope), messageId: envelope.eventId };
    await writeDeadLetter(this.c, message, envelope, error, attempts, undefined, [
      { consumer: this.c.name, source, version },
    ]);
  }

  /** Release whatever is releasable for a source (after a skip, or a crash between apply and release). */
  release(source: string): Promise<number> {
    return this.c.locks.run(`src:${source}`, () => this.c.withConflictRetries(() => this.releaseParked(source)));
  }

  /**
   * Move a source's checkpoint past a gap to just below its first parked version, then release
   * what was parked. The skipped versions are recorded on the gap alert. Use when the missing
   * events are known to be lost for good.
   */
  skipGap(source: string): Promise<{ from: number; to: number } | undefined> {
    const c = this.c;
    return c.locks.run(`src:${source}`, () =>
      c.withConflictRetries(async () => {
        const skipped = await commitGapSkip(c.journal, { consumer: c.name, source, now: c.clock.now() });
        if (!skipped) return undefined;
        const { from, to } = skipped;
        c.logger.warn({ consumer: c.name, source, from, to }, "gap skipped");
        await this.releaseParked(source);
        return { from, to };
      }),
    );
  }
}
