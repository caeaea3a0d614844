import { DuplicateMessageError, toError } from "../base/errors.js";
import type { Clock } from "../core/clock.js";
import type { Logger } from "../core/logger.js";
import type { ConsumerStateReader, DocumentReader, EventStore, ParkedRecord } from "../journal/types.js";
import type { Envelope } from "./envelope.js";
import type { MessagingMetrics } from "./metrics.js";

/**
 * What the monitor needs of its sequenced consumer. An interface of its own, so that this file
 * does not import consumer.ts (which imports this one): `Consumer` satisfies it.
 */
export interface GapHost {
  readonly name: string;
  /** The monitor reads parked messages and checkpoints, and commits alerts (documents) and unparks. */
  readonly journal: Pick<EventStore, "commit"> &
    Pick<ConsumerStateReader, "getCheckpoint" | "listParked"> &
    DocumentReader;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: MessagingMetrics;
  /** Release what is parked for `source` up to the next gap. */
  release(source: string): Promise<unknown>;
  /** Move the checkpoint past the open gap of `source` (recorded), then release. */
  skipGap(source: string): Promise<unknown>;
  handle(envelope: Envelope): Promise<unknown>;
}

/** Documents collection holding gap alerts (queryable with `journal.listDocuments`). */
export const GAP_ALERTS = "oncely.gap-alerts";

/**
 * `open`, `waiting` (the hook said wait) and `hook-failed` are unresolved; `supplied`, `skipped`
 * and `filled` are resolved, each set only once the checkpoint has passed the gap.
 */
export type GapStatus = "open" | "waiting" | "supplied" | "skipped" | "filled" | "hook-failed";

/** Whether an alert's gap is closed: the checkpoint passed it (see `GapStatus`). */
export const isGapResolved = (status: GapStatus): boolean =>
  status === "supplied" || status === "skipped" || status === "filled";

/** A gap in a producer stream that stayed open longer than the consumer's timeout. */
export interface GapAlert {
  consumer: string;
  /** Producer stream, `source/aggregateId`. */
  source: string;
  /** First missing version (checkpoint + 1). */
  fromVersion: number;
  /** Last missing version before the first parked one (as known when alerted). */
  toVersion: number;
  parkedVersions: number[];
  /** When the earliest message still parked behind the gap was parked (clock ms). */
  openedAt: number;
  alertedAt: number;
  status: GapStatus;
  resolvedAt: number | null;
  note: string | null;
}

/** The id of a gap's alert document: one per consumer, source and first missing version. */
export const gapAlertId = (consumer: string, source: string, fromVersion: number): string =>
  `${consumer}|${source}@${fromVersion}`;

/**
 * A gap's alert document updated with a resolution, for inclusion in a commit; undefined when the
 * gap was never alerted on. Shared by the monitor, `Consumer.skipGap` and the operator gap tools.
 */
export async function gapResolutionDocument(
  journal: Pick<DocumentReader, "getDocument">,
  gap: { consumer: string; source: string; fromVersion: number },
  status: GapStatus,
  note: string | null,
  now: number,
): Promise<{ collection: string; id: string; doc: GapAlert } | undefined> {
  const id = gapAlertId(gap.consumer, gap.source, gap.fromVersion);
  const existing = await journal.getDocument(GAP_ALERTS, id);
  if (!existing) return undefined;
  return { collection: GAP_ALERTS, id, doc: { ...(existing.doc as GapAlert), status, note, resolvedAt: now } };
}

export type GapInfo = Omit<GapAlert, "status" | "resolvedAt" | "note" | "alertedAt"> & { now: number };

/**
 * What reconciliation decided:
 * - `supply`: here are the missing events (e.g. fetched from the producer); they go through the
 *   normal consumer path (inbox, checkpoint), then the parked ones are released.
 * - `skip`: the events are lost for good; the checkpoint moves past the gap (recorded on the alert).
 * - `wait`: keep waiting; the alert stays visible (status `waiting`) for an operator.
 */
export type GapDecision = { action: "supply"; events: Envelope[] } | { action: "skip" } | { action: "wait" };

export type ReconcileHook = (gap: GapInfo) => Promise<GapDecision> | GapDecision;

/**
 * Watches parked messages of a sequenced consumer. A gap is identified by (source, first missing
 * version): its alert is committed with an inbox row `(<name>#gaps, <source>@<from>)`, so it is
 * raised exactly once even with several instances checking, and the hook runs once per gap, by
 * the instance whose alert commit won.
 *
 * Failure window: a crash after the alert commit and before the hook returns leaves the alert
 * `open` without a hook decision; it stays listed for an operator (`skipGap`, replay, supply).
 */
export class GapMonitor {
  constructor(
    private readonly consumer: GapHost,
    private readonly options: { timeoutMs: number; reconcile: ReconcileHook | undefined },
  ) {}

  private alertId(source: string, fromVersion: number): string {
    return gapAlertId(this.consumer.name, source, fromVersion);
  }

  /**
   * One look at every source with parked messages: stale rows (at or below the checkpoint) go,
   * releasable ones are released, and a gap open past the timeout is alerted on (once) and handed
   * to the reconciliation hook. A source whose check fails (a released version that throws, the
   * journal refusing) is logged and counted, and the others are still checked.
   */
  async check(now: number): Promise<GapAlert[]> {
    const { journal, name } = this.consumer;
    const parked = await journal.listParked(name);
    const bySource = new Map<string, typeof parked>();
    for (const p of parked) bySource.set(p.source, [...(bySource.get(p.source) ?? []), p]);
    const raised: GapAlert[] = [];
    for (const [source, records] of bySource) {
      try {
        const alert = await this.checkSource(source, records, now);
        if (alert) raised.push(alert);
      } catch (error) {
        this.consumer.metrics.gapCheckFailures.inc({ consumer: name });
        this.consumer.logger.warn({ consumer: name, source, err: error }, "gap check of a source failed");
      }
    }
    const left = (await journal.listParked(name)).length;
    this.consumer.metrics.parked.set({ consumer: name }, left);
    await this.markFilled();
    return raised;
  }

  private async checkSource(source: string, records: ParkedRecord[], now: number): Promise<GapAlert | undefined> {
    const { journal, name } = this.consumer;
    const checkpoint = await journal.getCheckpoint(name, source);
    const stale = records.filter((p) => p.version <= checkpoint);
    if (stale.length > 0) {
      // Left by a race between two instances (a park landing after the other applied it); the
      // version is taken, so the row can only mislead.
      await journal.commit({ unpark: stale.map((p) => ({ consumer: name, source, version: p.version })), now });
    }
    const live = records.filter((p) => p.version > checkpoint).sort((a, b) => a.version - b.version);
    const first = live[0];
    if (!first) return undefined;
    if (first.version === checkpoint + 1) {
      // Releasable: a crash, a failure or an operator's skip or supply between an apply and its release.
      await this.consumer.release(source);
      return undefined;
    }
    const openedAt = Math.min(...live.map((p) => p.parkedAt));
    if (now - openedAt < this.options.timeoutMs) return undefined;
    const alert: GapAlert = {
      consumer: name,
      source,
      fromVersion: checkpoint + 1,
      toVersion: first.version - 1,
      parkedVersions: live.map((p) => p.version),
      openedAt,
      alertedAt: now,
      status: "open",
      resolvedAt: null,
      note: null,
    };
    try {
      await journal.commit({
        inbox: { consumer: `${name}#gaps`, messageId: `${source}@${alert.fromVersion}`, reply: null },
        documents: [{ collection: GAP_ALERTS, id: this.alertId(source, alert.fromVersion), doc: alert }],
        now,
      });
    } catch (error) {
      if (error instanceof DuplicateMessageError) return undefined; // alerted before
      throw error;
    }
    this.consumer.metrics.gapAlerts.inc({ consumer: name });
    this.consumer.logger.warn(
      { consumer: name, source, from: alert.fromVersion, to: alert.toVersion, openedAt, now },
      "sequence gap open longer than its timeout",
    );
    await this.reconcile(alert, now);
    return alert;
  }

  private async reconcile(alert: GapAlert, now: number): Promise<void> {
    const hook = this.options.reconcile;
    if (!hook) return;
    const { status: _s, resolvedAt: _r, note: _n, alertedAt: _a, ...gap } = alert;
    try {
      const decision = await hook({ ...gap, now });
      if (decision.action === "skip") {
        await this.consumer.skipGap(alert.source);
      } else if (decision.action === "supply") {
        for (const event of decision.events) await this.consumer.handle(event);
        // Resolved only when the checkpoint passed the gap: supplied events the consumer did not
        // take (another source, a version already taken) leave it open, for an operator to see.
        const checkpoint = await this.consumer.journal.getCheckpoint(alert.consumer, alert.source);
        const supplied = `${decision.events.length} event(s) supplied`;
        if (checkpoint >= alert.fromVersion) {
          await this.setStatus(alert.source, alert.fromVersion, "supplied", supplied);
        } else {
          this.consumer.logger.warn(
            { consumer: alert.consumer, source: alert.source, from: alert.fromVersion, checkpoint },
            "supplied events did not fill the gap",
          );
          await this.setStatus(
            alert.source,
            alert.fromVersion,
            "open",
            `${supplied}, but the checkpoint is still at ${checkpoint}`,
          );
        }
      } else {
        await this.setStatus(alert.source, alert.fromVersion, "waiting", null);
      }
    } catch (error) {
      this.consumer.logger.error(
        { consumer: alert.consumer, source: alert.source, err: error },
        "gap reconciliation hook failed",
      );
      await this.setStatus(alert.source, alert.fromVersion, "hook-failed", toError(error).message);
    }
  }

  /** The alert document updated with a resolution, for inclusion in a commit; undefined when never alerted. */
  resolutionDocument(
    source: string,
    fromVersion: number,
    status: GapStatus,
    note: string | null = null,
  ): Promise<{ collection: string; id: string; doc: GapAlert } | undefined> {
    const { journal, name, clock } = this.consumer;
    return gapResolutionDocument(journal, { consumer: name, source, fromVersion }, status, note, clock.now());
  }

  private async setStatus(source: string, fromVersion: number, status: GapStatus, note: string | null): Promise<void> {
    const document = await this.resolutionDocument(source, fromVersion, status, note);
    if (document) await this.consumer.journal.commit({ documents: [document], now: this.consumer.clock.now() });
  }

  /** Alerts whose gap has since been passed by the checkpoint are marked `filled`. */
  private async markFilled(): Promise<void> {
    for (const alert of await this.list()) {
      if (alert.status !== "open" && alert.status !== "waiting" && alert.status !== "hook-failed") continue;
      const checkpoint = await this.consumer.journal.getCheckpoint(alert.consumer, alert.source);
      if (checkpoint >= alert.fromVersion) await this.setStatus(alert.source, alert.fromVersion, "filled", null);
    }
  }

  async list(): Promise<GapAlert[]> {
    const docs = await this.consumer.journal.listDocuments(GAP_ALERTS);
    return docs.map((d) => d.doc as GapAlert).filter((a) => a.consumer === this.consumer.name);
  }
}
