/**
 * Counts the non-blank lines of the subscription-renewal app in both versions: the oncely one
 * (examples/subscriptions/app.ts) and the Restate one (the ```typescript block of
 * docs/comparisons/restate-subscriptions.md), and prints their ratio. The figures in that doc come
 * from this script; examples/subscriptions/line-count.unit.test.ts holds the ratio to 1.5.
 *
 *   npx tsx scripts/count-lines.ts
 *
 * A line counts when it holds anything but whitespace: imports, comments and closing brackets count
 * the same in both versions.
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

export const ONCELY_APP = "examples/subscriptions/app.ts";
export const COMPARISON_DOC = "docs/comparisons/restate-subscriptions.md";

/** Lines holding anything but whitespace. */
export const nonBlankLines = (text: string): number => text.split("\n").filter((line) => line.trim() !== "").length;

/** The Restate version: the one ```typescript block of the comparison page (its ```ts blocks are oncely's, typechecked). */
export function restateBlock(markdown: string): string {
  const blocks = [...markdown.matchAll(/^```typescript\n([\s\S]*?)^```$/gm)];
  if (blocks.length !== 1) {
    throw new Error(
      `${COMPARISON_DOC} should hold exactly one \`\`\`typescript block (Restate's), found ${blocks.length}`,
    );
  }
  return blocks[0]?.[1] ?? "";
}

export interface LineCounts {
  oncely: number;
  restate: number;
  /** oncely / Restate. */
  ratio: number;
}

/** Count both versions, reading them from the repository at `root` (a file: URL or path of its top folder). */
export function countSubscriptionApps(root: URL = new URL("../", import.meta.url)): LineCounts {
  const oncely = nonBlankLines(readFileSync(new URL(ONCELY_APP, root), "utf8"));
  const restate = nonBlankLines(restateBlock(readFileSync(new URL(COMPARISON_DOC, root), "utf8")));
  return { oncely, restate, ratio: oncely / restate };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { oncely, restate, ratio } = countSubscriptionApps();
  console.log(`non-blank lines: oncely ${oncely} (${ONCELY_APP}), Restate ${restate} (${COMPARISON_DOC})`);
  console.log(`ratio oncely/Restate: ${ratio.toFixed(2)} (target: at most 1.50)`);
}
