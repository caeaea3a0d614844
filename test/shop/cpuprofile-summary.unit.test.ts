import { describe, expect, it } from "vitest";
import { type CpuProfile, summarizeProfile } from "../../examples/shop/demo/cpuprofile-summary.js";

const frame = (functionName: string, file: string) => ({
  functionName,
  url: `file:///repo/src/${file}`,
  lineNumber: 0,
});

/** root → run → (publish → append) and run → read; `run` also calls itself once. */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame("(root)", ""), children: [2] },
    { id: 2, callFrame: frame("run", "loop.ts"), children: [3, 5, 6] },
    { id: 3, callFrame: frame("publish", "relay.ts"), children: [4] },
    { id: 4, callFrame: frame("append", "journal.ts") },
    { id: 5, callFrame: frame("read", "journal.ts") },
    { id: 6, callFrame: frame("run", "loop.ts"), children: [7] },
    { id: 7, callFrame: frame("append", "journal.ts") },
  ],
  // append under publish 3 samples, read 1, run itself 1, append under the recursive run 2.
  samples: [4, 4, 4, 5, 2, 7, 7],
  timeDeltas: [100, 100, 100, 100, 100, 100, 100],
};

describe("cpuprofile summary", () => {
  const summary = summarizeProfile(profile, /^append /);
  const of = (rows: [string, number][], name: string) => rows.find(([n]) => n.startsWith(`${name} `))?.[1];

  it("sums self time per function across the nodes it appears in", () => {
    expect(summary.totalUs).toBe(700);
    expect(of(summary.self, "append")).toBe(500);
    expect(of(summary.self, "read")).toBe(100);
    expect(of(summary.self, "run")).toBe(100);
    expect(summary.self[0]?.[0]).toBe("append src/journal.ts");
  });

  it("counts a recursive function once per sample in its inclusive time", () => {
    expect(of(summary.inclusive, "run")).toBe(700);
    expect(of(summary.inclusive, "publish")).toBe(300);
  });

  it("splits a function's time by its direct callers", () => {
    const callers = summary.callers.get("append src/journal.ts");
    expect(callers).toEqual([
      ["publish src/relay.ts", 300],
      ["run src/loop.ts", 200],
    ]);
  });
});
