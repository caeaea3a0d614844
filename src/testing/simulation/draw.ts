import type { AnyActor } from "../../core/actor.js";
import { seededRandom } from "../../core/clock.js";

/**
 * The world a seed draws, besides its steps: which providers dedup by idempotency key and how
 * often actors snapshot. Without this every run met the same, friendliest world (every provider
 * deduping, snapshots every 50 events that no run reached), and bugs that only show against a
 * provider without dedup, or in the tail after a snapshot, were never exercised.
 */
export interface WorldDraw {
  /** Whether the provider of this effect kind dedups by key (drawn per seed and kind, about half do not). */
  dedups(kind: string): boolean;
  /** Every actor that snapshots does so every this many events (1: after every commit). */
  snapshotEvery: number;
}

export interface DrawOptions {
  /** Fix the snapshot interval instead of drawing it (1: always-snapshot mode). */
  snapshotEvery?: number | undefined;
}

/** Small enough that a run of a few hundred steps crosses several snapshots with a tail behind them. */
export const SNAPSHOT_INTERVALS = [1, 2, 3, 4, 6] as const;

export function drawWorld(seed: number, options: DrawOptions = {}): WorldDraw {
  const random = seededRandom(seed ^ 0x1b873593);
  const snapshotEvery =
    options.snapshotEvery ?? (SNAPSHOT_INTERVALS[Math.floor(random.next() * SNAPSHOT_INTERVALS.length)] as number);
  if (!Number.isInteger(snapshotEvery) || snapshotEvery < 1) {
    throw new Error(`snapshotEvery must be an integer >= 1, got ${snapshotEvery}`);
  }
  // Per kind, from the seed and the kind's name alone: adding a provider does not redraw the others.
  const dedups = (kind: string) => seededRandom(seed ^ nameHash(kind)).next() < 0.5;
  return {
    dedups,
    snapshotEvery,
  };
}

/** The system's actors with the drawn snapshot interval (actors without a snapshot policy keep none). */
export function withSnapshotEvery(actors: AnyActor[], every: number): AnyActor[] {
  return actors.map((actor) => (actor.snapshot ? { ...actor, snapshot: { ...actor.snapshot, every } } : actor));
}

/** FNV-1a, 32 bits. */
function nameHash(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
