import { InvalidInputError } from "../base/errors.js";
import type { CheckpointWrite, Commit } from "./types.js";

/** Every checkpoint a commit sets: `checkpoint` first, then `checkpoints`. */
export function checkpointsOf(commit: Pick<Commit, "checkpoint" | "checkpoints">): CheckpointWrite[] {
  const all = commit.checkpoint ? [commit.checkpoint] : [];
  return commit.checkpoints ? [...all, ...commit.checkpoints] : all;
}

/** One (consumer, source) may be set once per commit: two values for one row would be ambiguous. */
export function requireDistinctCheckpoints(checkpoints: readonly CheckpointWrite[]): void {
  if (checkpoints.length < 2) return;
  const seen = new Set<string>();
  for (const { consumer, source } of checkpoints) {
    const key = `${consumer}\0${source}`;
    if (seen.has(key)) {
      throw new InvalidInputError(`a commit sets checkpoint (${consumer}, ${source}) twice; set each one once`);
    }
    seen.add(key);
  }
}
