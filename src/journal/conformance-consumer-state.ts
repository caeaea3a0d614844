import { CheckpointConflictError, InvalidInputError } from "../base/errors.js";
import type { ConformanceTestApi } from "./conformance-api.js";
import { PUBLISHED_READER_SOURCE } from "./published.js";
import type { Journal } from "./types.js";

const T0 = 1_700_000_000_000;

/** A consumer's state (checkpoints, parked messages, forgetting), as tests run by `journalConformance` on every back end. */
export function consumerStateConformance(api: ConformanceTestApi, journal: () => Journal): void {
  const { describe, it, expect } = api;
  describe("consumer state", () => {
    it("guards several checkpoints in one commit: one that moved refuses it whole, naming that one", async () => {
      const j = journal();
      await j.commit({ checkpoint: { consumer: "view#doc", source: "revenue/m1", version: 3 }, now: T0 });
      const commit = {
        checkpoint: { consumer: "view", source: "billing/s1", version: 1, expected: 0 },
        checkpoints: [{ consumer: "view#doc", source: "revenue/m1", version: 3, expected: 2 }],
        documents: [{ collection: "revenue", id: "m1", doc: { total: 1 } }],
        now: T0 + 1,
      };
      const error = await j.commit(commit).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CheckpointConflictError);
      expect(error).toMatchObject({ consumer: "view#doc", source: "revenue/m1", expected: 2, actual: 3 });
      expect(await j.getCheckpoint("view", "billing/s1")).toBe(0);
      expect(await j.getDocument("revenue", "m1")).toBeUndefined();
      await j.commit({
        ...commit,
        checkpoints: [{ consumer: "view#doc", source: "revenue/m1", version: 4, expected: 3 }],
      });
      expect(await j.getCheckpoint("view", "billing/s1")).toBe(1);
      expect(await j.getCheckpoint("view#doc", "revenue/m1")).toBe(4);
      expect((await j.getDocument("revenue", "m1"))?.doc).toEqual({ total: 1 });
    });

    it("refuses a commit setting one checkpoint twice, writing nothing", async () => {
      const j = journal();
      const error = await j
        .commit({
          checkpoint: { consumer: "view", source: "s", version: 1 },
          checkpoints: [{ consumer: "view", source: "s", version: 2 }],
          now: T0,
        })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(await j.getCheckpoint("view", "s")).toBe(0);
    });

    it("reads one parked version of a source", async () => {
      const j = journal();
      await j.commit({
        park: [
          { consumer: "view", source: "s", version: 3, message: { v: 3 } },
          { consumer: "view", source: "s", version: 5, message: { v: 5 } },
          { consumer: "other", source: "s", version: 4, message: { v: 4 } },
        ],
        now: T0,
      });
      expect(await j.getParked("view", "s", 5)).toEqual({
        consumer: "view",
        source: "s",
        version: 5,
        message: { v: 5 },
        parkedAt: T0,
      });
      expect(await j.getParked("view", "s", 4)).toBeUndefined();
      expect(await j.getParked("view", "t", 3)).toBeUndefined();
    });

    it("forgets a consumer's inbox, checkpoints and parked messages, keeping its reader position when asked", async () => {
      const j = journal();
      const state = (consumer: string) => ({
        inbox: { consumer, messageId: "m1", reply: null },
        park: [{ consumer, source: "s", version: 9, message: {} }],
        now: T0,
      });
      for (const consumer of ["view", "other"]) {
        await j.commit({ ...state(consumer), checkpoint: { consumer, source: "s", version: 7 } });
        await j.commit({ checkpoint: { consumer, source: PUBLISHED_READER_SOURCE, version: 40 }, now: T0 });
      }
      expect(await j.forgetConsumer("view", { keepReader: true })).toEqual({ inbox: 1, checkpoints: 1, parked: 1 });
      expect(await j.getInbox("view", "m1")).toBeUndefined();
      expect(await j.getCheckpoint("view", "s")).toBe(0);
      expect(await j.listParked("view")).toEqual([]);
      expect(await j.getCheckpoint("view", PUBLISHED_READER_SOURCE)).toBe(40);
      expect(await j.forgetConsumer("view")).toEqual({ inbox: 0, checkpoints: 1, parked: 0 });
      expect(await j.getCheckpoint("view", PUBLISHED_READER_SOURCE)).toBe(0);
      // Another consumer's state is untouched.
      expect((await j.getInbox("other", "m1"))?.messageId).toBe("m1");
      expect(await j.getCheckpoint("other", "s")).toBe(7);
      expect(await j.listParked("other")).toHaveLength(1);
    });
  });
}
