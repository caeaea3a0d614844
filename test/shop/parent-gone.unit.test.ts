import { PassThrough } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { whenParentGone } from "../../examples/shop/demo/parent-gone.js";

describe("a demo worker whose parent dies", () => {
  it("stops once when its stdin ends, and exits anyway if the stop hangs", async () => {
    vi.useFakeTimers();
    try {
      const stdin = new PassThrough();
      const stops: string[] = [];
      const exits: number[] = [];
      whenParentGone(
        stdin,
        () => stops.push("stop"),
        (code) => exits.push(code),
        1_000,
      );
      await vi.advanceTimersByTimeAsync(5_000);
      expect(stops).toEqual([]);
      stdin.end();
      await vi.advanceTimersByTimeAsync(10);
      expect(stops).toEqual(["stop"]);
      expect(exits).toEqual([]);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(exits).toEqual([1]);
      expect(stops).toEqual(["stop"]);
    } finally {
      vi.useRealTimers();
    }
  });
});
