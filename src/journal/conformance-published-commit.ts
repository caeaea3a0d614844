import { DuplicateMessageError, VersionConflictError } from "../base/errors.js";
import { sliceOf } from "../core/slices.js";
import type { ConformanceTestApi } from "./conformance-api.js";
import type { Journal, NewPublished } from "./types.js";

const T0 = 1_700_000_000_000;

const entry = (id: string, key = `order-${id}`): NewPublished => ({
  messageId: id,
  subject: `shop.ordering.${id}`,
  body: JSON.stringify({ eventId: id, aggregateId: key, text: '注文 🧾 "quoted"' }),
  key,
});

const ev = (id: string) => ({ eventId: id, type: "Placed", data: { id } });

/**
 * `Commit.published`: entries appended to the published log by the commit itself (the journal
 * transport's hand-over at commit), as tests run by `journalConformance` on every back end.
 */
export function publishedCommitConformance(api: ConformanceTestApi, journal: () => Journal): void {
  const { describe, it, expect } = api;
  describe("published log: entries appended by a commit", () => {
    it("appends them with the commit, in list order, after earlier entries, at the commit's time and in their keys' slices", async () => {
      const j = journal();
      const count = j.sliceCount ?? 64;
      let woken = 0;
      const off = j.onPublished(() => woken++);
      const before = await j.appendPublished(entry("before"), T0);
      const result = await j.commit({
        stream: "order/1",
        expectedVersion: 0,
        events: [ev("e1"), ev("e2")],
        outbox: [{ id: "fx-1", category: "effect", kind: "payment", stream: "order/1", payload: {}, notBefore: T0 }],
        published: [entry("p1", "1"), entry("p2", "1")],
        now: T0 + 5,
      });
      expect(result.version).toBe(2);
      const log = await j.readPublished(before);
      expect(log.map((p) => [p.messageId, p.subject, p.body, p.publishedAt, p.slice])).toEqual([
        ["p1", entry("p1").subject, entry("p1", "1").body, T0 + 5, sliceOf("1", count)],
        ["p2", entry("p2").subject, entry("p2", "1").body, T0 + 5, sliceOf("1", count)],
      ]);
      expect((log[0]?.position ?? 0) > before).toBe(true);
      expect((log[1]?.position ?? 0) > (log[0]?.position ?? 0)).toBe(true);
      expect((await j.getOutbox("fx-1"))?.id).toBe("fx-1");
      for (let i = 0; i < 200 && woken < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(woken >= 2).toBe(true);
      off();
    });

    it("appends nothing for a commit that is refused (version conflict, duplicate inbox message)", async () => {
      const j = journal();
      await j.commit({
        stream: "order/2",
        expectedVersion: 0,
        events: [ev("a1")],
        inbox: { consumer: "order/2", messageId: "m1", reply: null },
        now: T0,
      });
      await expect(
        j.commit({ stream: "order/2", expectedVersion: 0, events: [ev("a2")], published: [entry("lost")], now: T0 }),
      ).rejects.toBeInstanceOf(VersionConflictError);
      await expect(
        j.commit({
          stream: "order/2",
          expectedVersion: 1,
          events: [ev("a3")],
          inbox: { consumer: "order/2", messageId: "m1", reply: null },
          published: [entry("dup")],
          now: T0,
        }),
      ).rejects.toBeInstanceOf(DuplicateMessageError);
      expect(await j.readPublished(0)).toEqual([]);
      expect(await j.readStream("order/2")).toHaveLength(1);
    });

    it("stores a message id already in the log once, keeping its first position and body", async () => {
      const j = journal();
      const first = await j.appendPublished(entry("x"), T0);
      await j.commit({
        stream: "order/3",
        expectedVersion: 0,
        events: [ev("b1")],
        published: [{ ...entry("x"), body: "another body" }, entry("y")],
        now: T0 + 1,
      });
      const log = await j.readPublished(0);
      expect(log.map((p) => p.messageId)).toEqual(["x", "y"]);
      expect(log[0]?.position).toBe(first);
      expect(log[0]?.body).toBe(entry("x").body);
      // The same entry appended later by a relay (a republish) adds nothing either.
      expect(await j.appendPublished(entry("y"), T0 + 2)).toBe(log[1]?.position);
      expect(await j.readPublished(0)).toHaveLength(2);
    });

    it("gives concurrent commits distinct positions, each commit's entries in order, one stream's commits in commit order", async () => {
      const j = journal();
      // Commits with and without entries, submitted together (one group-commit batch where there is one).
      const commits = Array.from({ length: 12 }, (_, i) =>
        j.commit({
          stream: `order/c${i}`,
          expectedVersion: 0,
          events: [ev(`c${i}`)],
          inbox: { consumer: `order/c${i}`, messageId: `cmd-${i}`, reply: { ok: i } },
          ...(i % 3 === 2 ? {} : { published: [entry(`c${i}-1`, `c${i}`), entry(`c${i}-2`, `c${i}`)] }),
          now: T0,
        }),
      );
      await Promise.all(commits);
      // A stream's later commit, after its first returned: its entry comes after that one's.
      await j.commit({
        stream: "order/c0",
        expectedVersion: 1,
        events: [ev("c0-next")],
        published: [entry("c0-3", "c0")],
        now: T0 + 1,
      });
      const log = await j.readPublished(0);
      expect(log).toHaveLength(8 * 2 + 1);
      expect(new Set(log.map((p) => p.position)).size).toBe(log.length);
      const at = new Map(log.map((p) => [p.messageId, p.position]));
      for (let i = 0; i < 12; i++) {
        if (i % 3 === 2) continue;
        expect((at.get(`c${i}-1`) ?? 0) < (at.get(`c${i}-2`) ?? 0)).toBe(true);
      }
      expect((at.get("c0-2") ?? 0) < (at.get("c0-3") ?? 0)).toBe(true);
      for (let i = 0; i < 12; i++) expect(await j.streamVersion(`order/c${i}`)).toBe(i === 0 ? 2 : 1);
    });
  });
}
