import { positiveInteger, RETENTION_DEFAULTS } from "../base/defaults.js";

/** The batch size of one `pruneOutbox` call, checked the same way on every back end. */
export function pruneBatchSize(limit: number | undefined): number {
  return positiveInteger("pruneOutbox limit", limit ?? RETENTION_DEFAULTS.pruneBatchSize);
}
