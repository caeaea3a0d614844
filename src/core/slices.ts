import { InvalidInputError } from "../base/errors.js";
import { parseAddress } from "./address.js";

/**
 * Slices: the unit of ownership. An actor's address hashes to one of a fixed number of slices (a
 * power of two, so a slice can later be split: slice k of n becomes k and k + n of 2n, and every
 * key of k lands in one of the two). A slice is owned by one worker at a time; that worker alone
 * runs the slice's actors and handles the slice's integration events.
 *
 * The key of an actor is its id, not its whole address: actors that share an id (the order, the
 * payment, the shipment and the fulfillment of one order) share a slice, so a conversation between
 * them stays in one worker and its events are handed over in memory. Integration events are
 * partitioned by the id of their producing aggregate, which is the same key.
 */

/** Slices of a system unless configured (a power of two). */
export const DEFAULT_SLICE_COUNT = 64;

/** The key an actor address hashes by: its id (`order/42` → `42`). */
export const sliceKeyOf = (address: string): string => parseAddress(address).id;

/** Throws unless `count` is a power of two between 1 and 2^16. */
export function requireSliceCount(count: number): number {
  if (!Number.isInteger(count) || count < 1 || count > 65_536 || (count & (count - 1)) !== 0) {
    throw new InvalidInputError(`slice count must be a power of two between 1 and 65536, got ${count}`);
  }
  return count;
}

/**
 * The slice of a key: FNV-1a (32 bits) of its UTF-16 code units, masked to the slice count. Stable
 * across processes, releases and platforms: changing it moves every actor, so it never changes.
 */
export function sliceOf(key: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) & (count - 1);
}

/** The slice of an actor address (`order/42`): the slice of its id. */
export const sliceOfAddress = (address: string, count: number): number => sliceOf(sliceKeyOf(address), count);

/**
 * What a worker owns now. The runtime, the consumers and the routing ask it; a lease manager (or,
 * in one process, `ownsEverything`) answers. `fence(slice)` is the fencing token the worker holds
 * the slice under: a commit made for the slice carries it, and the journal refuses the commit once
 * another worker has taken the slice (a higher token), whatever the stream versions say.
 */
export interface Ownership {
  readonly sliceCount: number;
  /** Whether this worker owns `slice` now. */
  owns(slice: number): boolean;
  /** The token this worker holds `slice` under, or undefined when it does not own it (or needs no fence). */
  fence(slice: number): number | undefined;
  /** Called after the set of owned slices changed. Returns an unsubscribe function. */
  onChange(listener: () => void): () => void;
  /**
   * Optional: a runtime registers how to wait until the commands of a slice in flight have settled;
   * an ownership that releases slices (a lease manager) stops answering `owns` for the slice, waits
   * for every registered hook, and only then lets the slice go. Returns an unregister function.
   */
  settleWith?(settle: (slice: number) => Promise<void>): () => void;
  /**
   * Optional: a runtime reports a commit refused by the fence of `slice` held under `token`; the
   * ownership drops the slice at once (another worker holds it under a higher token).
   */
  fencedOut?(slice: number, token: number): void;
}

/**
 * The fence of a slice is a checkpoint of this consumer, source `String(slice)`, whose version is
 * the slice's current fencing token. A commit made for the slice carries `fenceCheckpoint`: a guard
 * that leaves the checkpoint as it is and refuses the commit unless it still holds the token.
 */
export const SLICE_FENCE_CONSUMER = "oncely/slice-fence";

/** The guard a commit of `slice` carries when its worker holds the slice under `token`. */
export const fenceCheckpoint = (slice: number, token: number) => ({
  consumer: SLICE_FENCE_CONSUMER,
  source: String(slice),
  version: token,
  expected: token,
});

const everything = new WeakSet<Ownership>();

/** One process that owns every slice (SQLite, memory, a single worker): no fence, nothing moves. */
export function ownsEverything(sliceCount = DEFAULT_SLICE_COUNT): Ownership {
  requireSliceCount(sliceCount);
  const ownership: Ownership = {
    sliceCount,
    owns: () => true,
    fence: () => undefined,
    onChange: () => () => {},
  };
  everything.add(ownership);
  return ownership;
}

/**
 * Whether work must be split by slice under `ownership`: false without one, and for
 * `ownsEverything` (which never moves a slice), so a single process reads and claims as it did
 * before slices. A lease manager that happens to hold every slice now still splits: its slices move.
 */
export const splitsBySlice = (ownership: Ownership | undefined): ownership is Ownership =>
  ownership !== undefined && !everything.has(ownership);
