import { CheckpointConflictError } from "../base/errors.js";
import { fenceCheckpoint, SLICE_FENCE_CONSUMER } from "../core/slices.js";
import type { Journal } from "../journal/types.js";

/**
 * Slice leases kept in the journal with nothing but its existing primitives, so they work on every
 * back end (memory, SQLite, PostgreSQL) with no SQL of their own:
 *
 * - the fence of slice s is the checkpoint (`SLICE_FENCE_CONSUMER`, `String(s)`): its version is the
 *   slice's fencing token, which only grows;
 * - the lease is a document (`SLICE_LEASES`, `String(s)`): `{ owner, token, until }`, written in the
 *   same commit as every move of the checkpoint, so the two always agree;
 * - acquiring moves the checkpoint from the token read to the next one (a guarded checkpoint):
 *   of two workers that race for one slice, one commit moves it and the other is refused;
 * - renewing and releasing are guarded by `expected = version = token`: they fail once another
 *   worker has acquired the slice, so a lapsed owner learns it lost the slice.
 *
 * Workers announce themselves with a heartbeat document (`WORKERS`, their id) so that each knows how
 * many are alive, hence its fair share of slices.
 *
 * Times (`until`) come from each worker's clock: skew between workers shortens or lengthens a lease
 * as others see it (docs/design/ownership.md). The fence keeps a stale owner's writes out whatever
 * the clocks say; the lease only decides who should be writing.
 */

/** Collection of the lease documents, one per slice ever leased, id `String(slice)`. */
export const SLICE_LEASES = "oncely.slice-leases";
/** Collection of the workers' heartbeat documents, id the worker's id. */
export const WORKERS = "oncely.workers";

/** A slice's lease as stored; `owner` null once released. The lease holds while `now < until`. */
export interface SliceLease {
  slice: number;
  owner: string | null;
  token: number;
  until: number;
}

interface LeaseDoc {
  owner: string | null;
  token: number;
  until: number;
}

interface WorkerDoc {
  until: number;
  /** Where other workers send this one's commands (its peer endpoint), when it serves one. */
  endpoint?: string;
}

/** Whether a stored lease leaves `slice` to be taken at `now` (never leased, released, or expired). */
export const isFree = (lease: SliceLease | undefined, now: number): boolean =>
  lease === undefined || lease.owner === null || lease.until <= now;

export class SliceLeaseStore {
  constructor(private readonly journal: Journal) {}

  /** Every stored lease, by slice: one read. */
  async leases(): Promise<Map<number, SliceLease>> {
    const records = await this.journal.listDocuments(SLICE_LEASES);
    const leases = new Map<number, SliceLease>();
    for (const record of records) {
      const doc = record.doc as LeaseDoc;
      const slice = Number(record.id);
      leases.set(slice, { slice, owner: doc.owner, token: doc.token, until: doc.until });
    }
    return leases;
  }

  /** The workers whose heartbeat holds at `now`, sorted by id, each with its peer endpoint (if it serves one). */
  async workers(now: number): Promise<Map<string, string | undefined>> {
    const records = await this.journal.listDocuments(WORKERS);
    const live = new Map<string, string | undefined>();
    for (const record of records) {
      const doc = record.doc as WorkerDoc;
      if (doc.until > now) live.set(record.id, typeof doc.endpoint === "string" ? doc.endpoint : undefined);
    }
    return live;
  }

  /** Announce `workerId` alive until `until` (serving commands at `endpoint`, when given). */
  async heartbeat(workerId: string, until: number, now: number, endpoint?: string): Promise<void> {
    await this.journal.commit({
      documents: [{ collection: WORKERS, id: workerId, doc: workerDoc(until, endpoint) }],
      now,
    });
  }

  /** Withdraw `workerId`'s heartbeat (a worker that stops), so the others count one less at once. */
  async leave(workerId: string, now: number): Promise<void> {
    await this.journal.commit({ documents: [{ collection: WORKERS, id: workerId, doc: null }], now });
  }

  /**
   * Take `slice`, seen free under `lease` (undefined: never leased): one commit that moves the fence
   * from the token read to the next and writes the lease. Returns the new token, or undefined when
   * another worker moved the fence first (nothing written).
   */
  async acquire(
    slice: number,
    lease: SliceLease | undefined,
    owner: string,
    until: number,
    now: number,
  ): Promise<number | undefined> {
    let from = lease?.token;
    if (from === undefined) {
      // No lease in the caller's snapshot: the fence is read now (a fence without its lease document,
      // removed by hand, must not leave the slice stuck), then the document. One that exists now was
      // written by an acquisition since the snapshot (it writes both in one commit): the slice is
      // someone's, and taking it would take it from them (two workers starting together did, each
      // losing slices to the other at once). One written after both reads moved the fence, and the
      // commit below, expecting the fence read, is refused.
      from = await this.journal.getCheckpoint(SLICE_FENCE_CONSUMER, String(slice));
      if (await this.journal.getDocument(SLICE_LEASES, String(slice))) return undefined;
    }
    const token = from + 1;
    try {
      await this.journal.commit({
        checkpoints: [{ consumer: SLICE_FENCE_CONSUMER, source: String(slice), version: token, expected: from }],
        documents: [{ collection: SLICE_LEASES, id: String(slice), doc: { owner, token, until } satisfies LeaseDoc }],
        now,
      });
      return token;
    } catch (error) {
      if (error instanceof CheckpointConflictError) return undefined;
      throw error;
    }
  }

  /**
   * Extend the leases of `held` (slice → token) and `owner`'s heartbeat to `until`, in one commit
   * when every fence still holds. A slice whose fence moved (another worker took it) is left out and
   * returned; the others are renewed by a commit without it.
   */
  async renew(
    held: ReadonlyMap<number, number>,
    owner: string,
    until: number,
    now: number,
    endpoint?: string,
  ): Promise<number[]> {
    const remaining = new Map(held);
    const lost: number[] = [];
    for (;;) {
      try {
        await this.journal.commit({
          checkpoints: [...remaining].map(([slice, token]) => fenceCheckpoint(slice, token)),
          documents: [
            { collection: WORKERS, id: owner, doc: workerDoc(until, endpoint) },
            ...[...remaining].map(([slice, token]) => ({
              collection: SLICE_LEASES,
              id: String(slice),
              doc: { owner, token, until } satisfies LeaseDoc,
            })),
          ],
          now,
        });
        return lost;
      } catch (error) {
        const slice = fencedSlice(error);
        if (slice === undefined || !remaining.has(slice)) throw error;
        remaining.delete(slice);
        lost.push(slice);
      }
    }
  }

  /**
   * Let `slice` go: the lease is marked released (owner null) under the same token, so the next
   * worker takes it at once rather than after the lease. False when the fence had already moved.
   */
  async release(slice: number, token: number, now: number): Promise<boolean> {
    try {
      await this.journal.commit({
        checkpoints: [fenceCheckpoint(slice, token)],
        documents: [
          { collection: SLICE_LEASES, id: String(slice), doc: { owner: null, token, until: 0 } satisfies LeaseDoc },
        ],
        now,
      });
      return true;
    } catch (error) {
      if (fencedSlice(error) === slice) return false;
      throw error;
    }
  }
}

const workerDoc = (until: number, endpoint: string | undefined): WorkerDoc =>
  endpoint === undefined ? { until } : { until, endpoint };

/** The slice whose fence refused a commit, or undefined when `error` is something else. */
export function fencedSlice(error: unknown): number | undefined {
  if (!(error instanceof CheckpointConflictError) || error.consumer !== SLICE_FENCE_CONSUMER) return undefined;
  return Number(error.source);
}
