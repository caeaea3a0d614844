import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { effectStatusAfter, isFinalStatus, statusOfOutcome } from "../../src/effects/status.js";
import type { EffectStatus } from "../../src/effects/types.js";

const statuses: EffectStatus[] = ["NotRequested", "Pending", "Completed", "Failed", "Unknown"];
const status = fc.constantFrom(...statuses);
const fold = (start: EffectStatus, seq: EffectStatus[]) => seq.reduce(effectStatusAfter, start);

describe("effectStatusAfter", () => {
  it("follows NotRequested → Pending → Completed | Failed | Unknown, Unknown → Completed | Failed", () => {
    expect(effectStatusAfter("NotRequested", "Pending")).toBe("Pending");
    expect(effectStatusAfter("Pending", "Completed")).toBe("Completed");
    expect(effectStatusAfter("Pending", "Failed")).toBe("Failed");
    expect(effectStatusAfter("Pending", "Unknown")).toBe("Unknown");
    expect(effectStatusAfter("Unknown", "Completed")).toBe("Completed");
    expect(effectStatusAfter("Unknown", "Failed")).toBe("Failed");
  });

  it("never leaves a final status and never goes back to Pending or NotRequested", () => {
    expect(effectStatusAfter("Completed", "Failed")).toBe("Completed");
    expect(effectStatusAfter("Failed", "Completed")).toBe("Failed");
    expect(effectStatusAfter("Unknown", "Pending")).toBe("Unknown");
    expect(effectStatusAfter("Pending", "NotRequested")).toBe("Pending");
  });

  it("property: once final, any later sequence of outcomes keeps it", () => {
    fc.assert(
      fc.property(status, fc.array(status), fc.array(status), (start, before, after) => {
        const mid = fold(start, before);
        if (!isFinalStatus(mid)) return;
        expect(fold(mid, after)).toBe(mid);
      }),
    );
  });

  it("property: a duplicate of any outcome changes nothing (idempotent)", () => {
    fc.assert(
      fc.property(status, status, (current, next) => {
        const once = effectStatusAfter(current, next);
        expect(effectStatusAfter(once, next)).toBe(once);
      }),
    );
  });

  it("property: after Pending has been reached, the status is never Pending-or-less again unless it stays Pending", () => {
    fc.assert(
      fc.property(fc.array(status), (seq) => {
        let s: EffectStatus = "NotRequested";
        let seenBeyondPending = false;
        for (const next of seq) {
          s = effectStatusAfter(s, next);
          if (s === "Unknown" || isFinalStatus(s)) seenBeyondPending = true;
          if (seenBeyondPending) expect(["Unknown", "Completed", "Failed"]).toContain(s);
        }
      }),
    );
  });

  it("maps outcome commands to statuses", () => {
    const base = { key: "k", kind: "payment", attempt: 1 };
    expect(statusOfOutcome({ ...base, type: "oncely.effect.succeeded", result: 1, via: "run" })).toBe("Completed");
    expect(statusOfOutcome({ ...base, type: "oncely.effect.failed", error: "x", via: "run" })).toBe("Failed");
    expect(statusOfOutcome({ ...base, type: "oncely.effect.unknown", error: "x" })).toBe("Unknown");
    expect(statusOfOutcome({ type: "oncely.message.delivered", id: "m", to: "a/b", reply: null })).toBeUndefined();
  });
});
