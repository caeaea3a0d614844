import { expect, it } from "vitest";
import { countSubscriptionApps, nonBlankLines, restateBlock } from "../../scripts/count-lines.js";

it("the oncely app is at most 1.5 times the non-blank lines of the same app on Restate", () => {
  const { oncely, restate, ratio } = countSubscriptionApps();
  console.log(`non-blank lines: oncely ${oncely}, Restate ${restate}, ratio ${ratio.toFixed(2)}`);
  expect(restate).toBeGreaterThan(20); // the block was found and is the app, not a fragment
  expect(ratio).toBeLessThanOrEqual(1.5);
});

it("counts lines holding anything but whitespace, in the page's one typescript block", () => {
  expect(nonBlankLines("a\n\n  \n\tb\n}\n")).toBe(3);
  expect(restateBlock("text\n```ts\nx\n```\n```typescript\nconst a = 1;\n\nf(a);\n```\n")).toBe(
    "const a = 1;\n\nf(a);\n",
  );
  expect(() => restateBlock("```ts\nx\n```\n")).toThrow(/exactly one ```typescript block.*found 0/);
});
