import type { GroupCommitStats } from "../src/journal/group-commit.js";
import type { Journal } from "../src/journal/types.js";

/** The SQL journals expose their group-commit batch sizes; the memory journal has none. */
const statsOf = (journal: Journal): GroupCommitStats | undefined =>
  (journal as { groupCommitStats?: GroupCommitStats }).groupCommitStats;

/** A copy of the counters now, to print what one measurement added. */
export function groupCommitMark(journal: Journal): GroupCommitStats | undefined {
  const stats = statsOf(journal);
  return stats && { ...stats, sizes: new Map(stats.sizes) };
}

/** "group commit: 412 batches, 3.1 commits/batch, largest 50; sizes 1:120 2-3:80 ..." since `mark`. */
export function groupCommitLine(journal: Journal, mark: GroupCommitStats | undefined): string {
  const now = statsOf(journal);
  if (!now) return "group commit: n/a";
  const batches = now.batches - (mark?.batches ?? 0);
  const commits = now.commits - (mark?.commits ?? 0);
  const sizes = [...now.sizes.entries()]
    .map(([bucket, count]) => [bucket, count - (mark?.sizes.get(bucket) ?? 0)] as const)
    .filter(([, count]) => count > 0)
    .sort((a, b) => a[0] - b[0])
    .map(([bucket, count]) => `${bucket === 1 ? "1" : `${bucket}-${bucket * 2 - 1}`}:${count}`)
    .join(" ");
  return `group commit: ${batches} batches, ${(commits / Math.max(1, batches)).toFixed(1)} writes/batch, largest ${now.largest}; batches by size ${sizes}`;
}
