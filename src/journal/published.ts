import { InvalidInputError } from "../base/errors.js";
import { DEFAULT_SLICE_COUNT, sliceOf } from "../core/slices.js";
import type { NewPublished } from "./roles/published-log.js";

/**
 * The journal's published log, shared by every back end: the checkpoint source under which a
 * reader of the log keeps its position. A reader's position is an ordinary checkpoint, so it can
 * be advanced in any commit with `Commit.checkpoint` (guarded by `expected`), and retention
 * (`prunePublished`) keeps every entry some registered reader has not passed.
 */
export const PUBLISHED_READER_SOURCE = "oncely.published";

/**
 * A reader that owns some slices keeps one position per slice under this source, so that a slice
 * moving to another worker moves with its position. Its position in slice s is the larger of this
 * checkpoint and its `PUBLISHED_READER_SOURCE` one (which it keeps as its registration, and which a
 * reader of every slice moves).
 */
export const publishedSliceSource = (slice: number): string => `${PUBLISHED_READER_SOURCE}#${slice}`;

/** The prefix of every `publishedSliceSource`. */
export const PUBLISHED_SLICE_SOURCE_PREFIX = `${PUBLISHED_READER_SOURCE}#`;

/** The slice an appended entry is stored in: its key's (the message id's when it has none). */
export const publishedSlice = (entry: NewPublished, count: number = DEFAULT_SLICE_COUNT): number =>
  sliceOf(entry.key ?? entry.messageId, count);

/**
 * The slice of an entry stored before slices (a migration's backfill): its body's `aggregateId`
 * when the body is an envelope, else its message id's. Never throws.
 */
export function backfilledPublishedSlice(body: string, messageId: string, count: number): number {
  let key = messageId;
  try {
    const parsed = JSON.parse(body) as { aggregateId?: unknown } | null;
    if (parsed && typeof parsed.aggregateId === "string") key = parsed.aggregateId;
  } catch {
    // Not JSON: keyed by its message id.
  }
  return sliceOf(key, count);
}

/**
 * Retention's rule (`prunePublished`), over a journal's checkpoints: whether every registered
 * reader (a `PUBLISHED_READER_SOURCE` checkpoint) has passed the entry at `position` of `slice`,
 * its position in that slice being the larger of that checkpoint and its `publishedSliceSource`
 * one. False when there is no reader.
 */
export function passedByEveryReader(
  checkpoints: Iterable<{ consumer: string; source: string; version: number }>,
): (slice: number, position: number) => boolean {
  const readers = new Map<string, { floor: number; slices: Map<number, number> }>();
  const sliced: { consumer: string; slice: number; version: number }[] = [];
  for (const { consumer, source, version } of checkpoints) {
    if (source === PUBLISHED_READER_SOURCE) readers.set(consumer, { floor: version, slices: new Map() });
    else if (source.startsWith(PUBLISHED_SLICE_SOURCE_PREFIX)) {
      const slice = Number(source.slice(PUBLISHED_SLICE_SOURCE_PREFIX.length));
      if (Number.isInteger(slice)) sliced.push({ consumer, slice, version });
    }
  }
  for (const { consumer, slice, version } of sliced) readers.get(consumer)?.slices.set(slice, version);
  const all = [...readers.values()];
  return (slice, position) =>
    all.length > 0 && all.every((r) => Math.max(r.floor, r.slices.get(slice) ?? 0) >= position);
}

/** Throws unless every slice of a `readPublished` is an integer from 0 to the journal's count - 1. */
export function requirePublishedSlices(slices: readonly number[], count: number): void {
  for (const slice of slices) {
    if (!Number.isInteger(slice) || slice < 0 || slice >= count) {
      throw new InvalidInputError(
        `readPublished slices must be integers from 0 to ${count - 1} (the journal's slice count), got ${slice}`,
      );
    }
  }
}
