import type { ConformanceTestApi } from "./conformance-api.js";
import type { Journal, StateReads } from "./types.js";

const T0 = 1_700_000_000_000;

/** Consumer state read together (`readState`), as tests run by `journalConformance` on every back end. */
export function stateReadsConformance(api: ConformanceTestApi, journal: () => Journal): void {
  const { describe, it, expect } = api;
  describe("state reads", () => {
    /** A checkpoint, an inbox row, a parked message and a document, with text that must come back as written. */
    async function seed(j: Journal): Promise<void> {
      await j.commit({
        inbox: { consumer: "view", messageId: "m-1", reply: { note: 'é " \\ \u2028 done' } },
        checkpoint: { consumer: "view", source: "orders/o1", version: 4 },
        checkpoints: [{ consumer: "view#doc", source: "timeline/o1", version: 2 }],
        park: [{ consumer: "view", source: "orders/o1", version: 6, message: { eventId: "e6", data: [1, "two"] } }],
        documents: [{ collection: "timeline", id: "o1", doc: { steps: ["placed", "paid"], total: 12.5 } }],
        now: T0,
      });
    }

    it("answers every kind, list for list and in request order, as the point reads do", async () => {
      const j = journal();
      await seed(j);
      const reads: StateReads = {
        checkpoints: [
          { consumer: "view", source: "orders/o2" },
          { consumer: "view", source: "orders/o1" },
          { consumer: "view#doc", source: "timeline/o1" },
        ],
        inbox: [
          { consumer: "view", messageId: "m-1" },
          { consumer: "other", messageId: "m-1" },
        ],
        parked: [
          { consumer: "view", source: "orders/o1", version: 5 },
          { consumer: "view", source: "orders/o1", version: 6 },
        ],
        documents: [
          { collection: "timeline", id: "o1" },
          { collection: "timeline", id: "o9" },
        ],
      };
      const answers = await j.readState(reads);
      expect(answers.checkpoints).toEqual([0, 4, 2]);
      expect(answers.inbox).toEqual([await j.getInbox("view", "m-1"), undefined]);
      expect(answers.inbox[0]?.reply).toEqual({ note: 'é " \\ \u2028 done' });
      expect(answers.parked).toEqual([undefined, await j.getParked("view", "orders/o1", 6)]);
      expect(answers.parked[1]).toMatchObject({
        version: 6,
        message: { eventId: "e6", data: [1, "two"] },
        parkedAt: T0,
      });
      expect(answers.documents).toEqual([await j.getDocument("timeline", "o1"), undefined]);
      expect(answers.documents[0]).toMatchObject({ doc: { steps: ["placed", "paid"], total: 12.5 }, updatedAt: T0 });
    });

    it("answers empty lists for kinds not asked for, and nothing for an empty request", async () => {
      const j = journal();
      await seed(j);
      expect(await j.readState({})).toEqual({ checkpoints: [], inbox: [], parked: [], documents: [] });
      expect(await j.readState({ inbox: [{ consumer: "view", messageId: "m-1" }] })).toMatchObject({
        checkpoints: [],
        inbox: [{ consumer: "view", messageId: "m-1", recordedAt: T0 }],
        parked: [],
        documents: [],
      });
    });

    it("gives callers reading together their own answers, a key asked twice answered twice", async () => {
      const j = journal();
      await seed(j);
      const [first, second, third] = await Promise.all([
        j.readState({ checkpoints: [{ consumer: "view", source: "orders/o1" }] }),
        j.readState({
          checkpoints: [
            { consumer: "view", source: "orders/o1" },
            { consumer: "view", source: "orders/o1" },
          ],
          documents: [{ collection: "timeline", id: "o1" }],
        }),
        j.readState({ parked: [{ consumer: "view", source: "orders/o1", version: 6 }] }),
      ]);
      expect(first.checkpoints).toEqual([4]);
      expect(first.documents).toEqual([]);
      expect(second.checkpoints).toEqual([4, 4]);
      expect(second.documents[0]?.id).toBe("o1");
      expect(third.parked[0]?.version).toBe(6);
      expect(third.checkpoints).toEqual([]);
    });

    it("sees a commit made after an earlier read", async () => {
      const j = journal();
      const reads = { checkpoints: [{ consumer: "view", source: "s" }], inbox: [{ consumer: "view", messageId: "m" }] };
      expect(await j.readState(reads)).toMatchObject({ checkpoints: [0], inbox: [undefined] });
      await j.commit({
        inbox: { consumer: "view", messageId: "m", reply: null },
        checkpoint: { consumer: "view", source: "s", version: 1, expected: 0 },
        now: T0,
      });
      const after = await j.readState(reads);
      expect(after.checkpoints).toEqual([1]);
      expect(after.inbox[0]?.messageId).toBe("m");
    });
  });
}
