import { InvalidInputError } from "../base/errors.js";
import { DEFAULT_SLICE_COUNT, requireSliceCount, sliceOf } from "../core/slices.js";
import type { ClaimOptions, NewOutboxRow, OutboxCategory } from "./types.js";

/**
 * The slice an outbox row belongs to: the slice of the actor that handles it, so that a claim for
 * the slices a worker owns takes exactly the rows that worker's actors must run.
 *
 * - an effect or a timer: its stream's actor (the one that requested it and receives its outcome);
 * - a message: the receiving actor (`payload.to`), who runs it; a message whose payload names no
 *   receiver (a malformed row) falls back to its stream, so that it is still claimed somewhere;
 * - an integration event: its producing stream.
 *
 * The key is the address's id, as in `sliceOfAddress`; a stream that is not an address (`type/id`)
 * hashes whole. Never throws: a row is always inserted, even one no actor can handle.
 *
 * PostgreSQL's `oncely_slice_of` (schema 0002) computes the same from the stored columns, for the
 * rows a migration backfills; a test holds the two equal.
 */
export function outboxSlice(
  row: Pick<NewOutboxRow, "category" | "stream" | "payload">,
  count: number = DEFAULT_SLICE_COUNT,
): number {
  return sliceOf(sliceKeyOfStream(outboxSliceStream(row.category, row.stream, row.payload)), count);
}

/** The stream (actor address) whose slice a row takes (see `outboxSlice`). */
export function outboxSliceStream(category: OutboxCategory, stream: string, payload: unknown): string {
  if (category !== "message") return stream;
  const to = typeof payload === "object" && payload !== null ? (payload as { to?: unknown }).to : undefined;
  return typeof to === "string" ? to : stream;
}

/** An address's id (`order/42` → `42`); the whole text when it is not an address. */
export function sliceKeyOfStream(stream: string): string {
  const slash = stream.indexOf("/");
  return slash <= 0 || slash === stream.length - 1 ? stream : stream.slice(slash + 1);
}

/** A journal's `sliceCount` option, checked (`DEFAULT_SLICE_COUNT` when absent). */
export const journalSliceCount = (count: number | undefined): number => requireSliceCount(count ?? DEFAULT_SLICE_COUNT);

/**
 * A claim's `slices`, checked against the journal's slice count; undefined means every slice (no
 * filter at all). An empty list claims nothing.
 */
export function claimSlices(options: ClaimOptions, count: number): readonly number[] | undefined {
  const slices = options.slices;
  if (slices === undefined) return undefined;
  for (const slice of slices) {
    if (!Number.isInteger(slice) || slice < 0 || slice >= count) {
      throw new InvalidInputError(
        `claim slices must be integers from 0 to ${count - 1} (the journal's slice count), got ${slice}`,
      );
    }
  }
  return slices;
}
