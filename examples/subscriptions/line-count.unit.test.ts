import { readFileSync } from "node:fs";
import { expect, it } from "vitest";

/** Non-blank lines of a text. */
const nonBlank = (text: string): number => text.split("\n").filter((line) => line.trim() !== "").length;

it("the oncely app is at most 1.5 times the non-blank lines of the same app on Restate", () => {
  const oncely = nonBlank(readFileSync(new URL("./app.ts", import.meta.url), "utf8"));
  const doc = readFileSync(new URL("../../docs/comparisons/restate-subscriptions.md", import.meta.url), "utf8");
  const block = /^```typescript\n([\s\S]*?)^```$/m.exec(doc)?.[1];
  expect(block, "the Restate version's ```typescript block").toBeDefined();
  const restate = nonBlank(block ?? "");
  const ratio = oncely / restate;
  console.log(`non-blank lines: oncely ${oncely}, Restate ${restate}, ratio ${ratio.toFixed(2)}`);
  expect(ratio).toBeLessThanOrEqual(1.5);
});
