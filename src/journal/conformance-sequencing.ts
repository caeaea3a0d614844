import { CheckpointConflictError } from "../base/errors.js";
import { type ConformanceContext, T0 } from "./conformance-fixtures.js";

/** Checkpoints and parked messages written by commits. Run by `journalConformance` on every back end. */
export function sequencingConformance(ctx: ConformanceContext): void {
  const { describe, it, expect } = ctx.api;
  describe("sequencing", () => {
    it("sets checkpoints, checking the expected version when given", async () => {
      const j = ctx.journal();
      expect(await j.getCheckpoint("c", "src")).toBe(0);
      await j.commit({ checkpoint: { consumer: "c", source: "src", version: 1, expected: 0 }, now: T0 });
      await j.commit({ checkpoint: { consumer: "c", source: "src", version: 2, expected: 1 }, now: T0 });
      await expect(
        j.commit({ checkpoint: { consumer: "c", source: "src", version: 3, expected: 1 }, now: T0 }),
      ).rejects.toBeInstanceOf(CheckpointConflictError);
      await expect(
        j.commit({ checkpoint: { consumer: "c", source: "other", version: 3, expected: 2 }, now: T0 }),
      ).rejects.toMatchObject({ expected: 2, actual: 0 });
      await expect(
        j.commit({ checkpoint: { consumer: "c", source: "src", version: 3, expected: 0 }, now: T0 }),
      ).rejects.toMatchObject({ expected: 0, actual: 2 });
      expect(await j.getCheckpoint("c", "src")).toBe(2);
      await j.commit({ checkpoint: { consumer: "c", source: "src", version: 9 }, now: T0 });
      expect(await j.getCheckpoint("c", "src")).toBe(9);
      expect(await j.getCheckpoint("c", "other")).toBe(0);
      expect(await j.getCheckpoint("d", "src")).toBe(0);
    });

    it("parks, lists in (source, version) order and unparks", async () => {
      const j = ctx.journal();
      await j.commit({
        park: [
          { consumer: "c", source: "s2", version: 5, message: { v: 5 } },
          { consumer: "c", source: "s1", version: 9, message: { v: 9 } },
          { consumer: "c", source: "s1", version: 3, message: { v: 3 } },
          { consumer: "d", source: "s1", version: 1, message: { v: 1 } },
        ],
        now: T0,
      });
      await j.commit({ park: [{ consumer: "c", source: "s1", version: 3, message: { v: "again" } }], now: T0 + 1 });
      const all = await j.listParked("c");
      expect(all.map((p) => [p.source, p.version])).toEqual([
        ["s1", 3],
        ["s1", 9],
        ["s2", 5],
      ]);
      expect(all[0]).toEqual({ consumer: "c", source: "s1", version: 3, message: { v: 3 }, parkedAt: T0 });
      expect((await j.listParked("c", "s1")).map((p) => p.version)).toEqual([3, 9]);
      await j.commit({
        unpark: [
          { consumer: "c", source: "s1", version: 3 },
          { consumer: "c", source: "s1", version: 42 },
        ],
        now: T0 + 2,
      });
      expect((await j.listParked("c")).map((p) => [p.source, p.version])).toEqual([
        ["s1", 9],
        ["s2", 5],
      ]);
      expect(await j.listParked("d", "s1")).toHaveLength(1);
      expect(await j.listParked("nobody")).toEqual([]);
    });
  });
}
