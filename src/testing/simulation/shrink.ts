import type { Step } from "./steps.js";

/**
 * Delta debugging (ddmin) over a failing step list: remove chunks, keep any removal after which
 * the run still fails, refine the chunk size, stop at a local minimum or when the budget is spent.
 * Steps resolve their targets at run time, so every subsequence is a valid run.
 */
export async function shrinkSteps(
  steps: Step[],
  budget: number,
  stillFails: (candidate: Step[]) => Promise<boolean>,
): Promise<Step[]> {
  let current = steps;
  let chunks = 2;
  let runs = 0;
  while (current.length > 1 && runs < budget) {
    const size = Math.ceil(current.length / chunks);
    let reduced = false;
    for (let start = 0; start < current.length && runs < budget; start += size) {
      const candidate = [...current.slice(0, start), ...current.slice(start + size)];
      runs++;
      if (await stillFails(candidate)) {
        current = candidate;
        chunks = Math.max(chunks - 1, 2);
        reduced = true;
        break;
      }
    }
    if (!reduced) {
      if (size === 1) break;
      chunks = Math.min(chunks * 2, current.length);
    }
  }
  return current;
}
