import { InvalidInputError } from "../base/errors.js";
import type { ConformanceTestApi } from "./conformance-api.js";
import type { Page } from "./console-queries.js";
import { PUBLISHED_READER_SOURCE } from "./published.js";
import type { Journal, NewDeadLetter, NewOutboxRow } from "./types.js";

const T0 = 1_700_000_000_000;

const row = (id: string, over: Partial<NewOutboxRow> = {}): NewOutboxRow => ({
  id,
  category: "effect",
  kind: "payment",
  stream: "order/1",
  payload: { id },
  notBefore: T0,
  ...over,
});

const letter = (id: string, over: Partial<NewDeadLetter> = {}): NewDeadLetter => ({
  id,
  consumer: "billing",
  messageId: `m-${id}`,
  payload: { id },
  error: "boom",
  stack: null,
  attempts: 5,
  firstFailedAt: T0,
  lastFailedAt: T0,
  ...over,
});

/** Every page of a query, following `next`, as ids. */
async function allPages<T>(read: (after: string | undefined) => Promise<Page<T>>, id: (item: T) => string) {
  const ids: string[] = [];
  let after: string | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const page = await read(after);
    ids.push(...page.items.map(id));
    if (page.next === null) return ids;
    after = page.next;
  }
  throw new Error("more than 100 pages");
}

/** The console's paginated queries (`ConsoleQueries`), as tests run by `journalConformance` on every back end. */
export function consoleQueriesConformance(api: ConformanceTestApi, journal: () => Journal): void {
  const { describe, it, expect } = api;
  describe("console queries", () => {
    /** Eight effects at T0+1..T0+8 (two sharing T0+4), of two kinds and owners, in every status. */
    async function effects(j: Journal) {
      const at = (id: string, now: number, over: Partial<NewOutboxRow> = {}) =>
        j.commit({ outbox: [row(id, over)], now });
      await at("e1", T0 + 1);
      await at("e2", T0 + 2, { kind: "shipment", stream: "order/2" });
      await at("e3", T0 + 3);
      await at("e4a", T0 + 4);
      await at("e4b", T0 + 4, { kind: "shipment" });
      await at("e5", T0 + 5, { stream: "order/2" });
      await at("e6", T0 + 6);
      await at("e7", T0 + 7);
      await j.commit({ outbox: [row("m1", { category: "message" })], now: T0 + 9 });
      // e1 Pending; e2 Unknown (pending with unknownSince); e3 resolving; e4a reconcile; e4b completed;
      // e5 failed (done); e6 dead; e7 fired (a timer: Completed).
      await j.forceOutbox("e2", { result: { unknownSince: T0 + 20, lookups: 1 } }, T0 + 20);
      await j.forceOutbox("e3", { status: "resolving", lastError: "provider timed out" }, T0 + 20);
      await j.forceOutbox("e4a", { status: "reconcile", lastError: "still Unknown after 5 lookups" }, T0 + 20);
      await j.forceOutbox("e4b", { status: "done", outcome: "completed", result: { ok: 1 } }, T0 + 20);
      await j.forceOutbox("e5", { status: "done", outcome: "failed", result: { reason: "declined" } }, T0 + 20);
      await j.forceOutbox("e6", { status: "dead", lastError: "decide refused" }, T0 + 20);
      await j.forceOutbox("e7", { status: "done", outcome: "fired" }, T0 + 20);
    }

    it("pages the outbox newest first, by creation time then insertion order, each row once", async () => {
      const j = journal();
      await effects(j);
      const first = await j.pageOutbox({ category: "effect", limit: 3 });
      expect(first.items.map((r) => r.id)).toEqual(["e7", "e6", "e5"]);
      expect(first.next).not.toBeNull();
      const ids = await allPages(
        (after) => j.pageOutbox({ category: "effect", limit: 3, after }),
        (r) => r.id,
      );
      expect(ids).toEqual(["e7", "e6", "e5", "e4b", "e4a", "e3", "e2", "e1"]);
      const all = await j.pageOutbox({ category: "effect", limit: 8 });
      expect(all.next).toBeNull();
      expect(all.items[0]).toMatchObject({ id: "e7", status: "done", outcome: "fired", createdAt: T0 + 7 });
    });

    it("filters the outbox by effect status as the effects view shows it", async () => {
      const j = journal();
      await effects(j);
      const ids = async (effectStatus: "Pending" | "Unknown" | "Completed" | "Failed") =>
        (await j.pageOutbox({ category: "effect", effectStatus, limit: 50 })).items.map((r) => r.id);
      expect(await ids("Pending")).toEqual(["e1"]);
      expect(await ids("Unknown")).toEqual(["e4a", "e3", "e2"]);
      expect(await ids("Completed")).toEqual(["e7", "e4b"]);
      expect(await ids("Failed")).toEqual(["e6", "e5"]);
      const reconcile = await j.pageOutbox({ category: "effect", status: ["reconcile"], limit: 50 });
      expect(reconcile.items.map((r) => r.id)).toEqual(["e4a"]);
      const both = await j.pageOutbox({ category: "effect", status: ["dead"], effectStatus: "Unknown", limit: 50 });
      expect(both.items).toEqual([]);
    });

    it("filters the outbox by kind, owner, text of the id or error, and creation time, across pages", async () => {
      const j = journal();
      await effects(j);
      const ids = async (q: Parameters<Journal["pageOutbox"]>[0]) =>
        allPages(
          (after) => j.pageOutbox({ ...q, after }),
          (r) => r.id,
        );
      expect(await ids({ category: "effect", kind: "shipment", limit: 1 })).toEqual(["e4b", "e2"]);
      expect(await ids({ category: "effect", stream: "order/2", limit: 1 })).toEqual(["e5", "e2"]);
      expect(await ids({ category: "effect", text: "4", limit: 1 })).toEqual(["e4b", "e4a"]);
      expect(await ids({ category: "effect", text: "Unknown after", limit: 1 })).toEqual(["e4a"]);
      expect(await ids({ category: "effect", text: "unknown after", limit: 1 })).toEqual([]);
      expect(await ids({ category: "effect", since: T0 + 4, until: T0 + 6, limit: 1 })).toEqual(["e5", "e4b", "e4a"]);
      expect(await ids({ category: "message", limit: 5 })).toEqual(["m1"]);
    });

    it("refuses a cursor it did not hand out and a page size out of bounds, naming the field", async () => {
      const j = journal();
      for (const bad of ["nonsense", Buffer.from('["d",1,"x"]').toString("base64url")]) {
        const error = await j.pageOutbox({ category: "effect", limit: 5, after: bad }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidInputError);
        expect((error as InvalidInputError).issues).toEqual(["after: not a cursor this journal handed out"]);
      }
      const error = await j.pageDeadLetters({ limit: 0 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect((error as InvalidInputError).issues).toEqual(["limit: must be an integer from 1 to 500"]);
    });

    it("pages and counts dead letters by status, consumer, error text and failure time, latest first", async () => {
      const j = journal();
      await j.commit({
        deadLetters: [
          letter("d1", { lastFailedAt: T0 + 1, error: "card declined: insufficient funds" }),
          letter("d2", { lastFailedAt: T0 + 2, consumer: "shipping", error: "address invalid" }),
          letter("d3", { lastFailedAt: T0 + 3, error: "card declined: expired" }),
          letter("d4a", { lastFailedAt: T0 + 4, error: "timeout" }),
          letter("d4b", { lastFailedAt: T0 + 4, error: "card declined: stolen" }),
        ],
        now: T0 + 10,
      });
      await j.resolveDeadLetter("d3", "discarded", T0 + 11);
      const ids = async (q: Parameters<Journal["pageDeadLetters"]>[0]) =>
        allPages(
          (after) => j.pageDeadLetters({ ...q, after }),
          (d) => d.id,
        );
      expect(await ids({ limit: 2 })).toEqual(["d4b", "d4a", "d3", "d2", "d1"]);
      expect(await ids({ status: "open", limit: 2 })).toEqual(["d4b", "d4a", "d2", "d1"]);
      expect(await ids({ status: "open", consumer: "billing", errorContains: "declined", limit: 1 })).toEqual([
        "d4b",
        "d1",
      ]);
      expect(await ids({ since: T0 + 2, until: T0 + 4, limit: 1 })).toEqual(["d3", "d2"]);
      expect(await j.countDeadLetters({ status: "open", errorContains: "card declined" })).toBe(2);
      expect(await j.countDeadLetters({ consumer: "billing" })).toBe(4);
      expect(await j.countDeadLetters({ consumer: "billing", since: T0 + 4 })).toBe(2);
      expect(await j.countDeadLetters({})).toBe(5);
      const [d4b] = (await j.pageDeadLetters({ limit: 1 })).items;
      expect(d4b).toMatchObject({ id: "d4b", consumer: "billing", status: "open", lastFailedAt: T0 + 4 });
    });

    it("tells where each consumer stands: readers of the published log, and what is parked per source", async () => {
      const j = journal();
      expect(await j.consumerPositions()).toEqual({ publishedHead: 0, readers: [], parked: [] });
      for (let i = 1; i <= 3; i++) await j.appendPublished({ messageId: `p${i}`, subject: "s", body: "{}" }, T0);
      const head = (await j.readPublished(0)).at(-1)?.position ?? 0;
      await j.commit({ checkpoint: { consumer: "billing", source: PUBLISHED_READER_SOURCE, version: 1 }, now: T0 + 5 });
      await j.commit({
        checkpoint: { consumer: "audit", source: PUBLISHED_READER_SOURCE, version: head },
        now: T0 + 6,
      });
      await j.commit({ checkpoint: { consumer: "billing", source: "order/o-1", version: 2 }, now: T0 + 7 });
      await j.commit({
        park: [
          { consumer: "billing", source: "order/o-1", version: 5, message: {} },
          { consumer: "billing", source: "order/o-1", version: 4, message: {} },
        ],
        now: T0 + 8,
      });
      await j.commit({ park: [{ consumer: "billing", source: "order/o-2", version: 3, message: {} }], now: T0 + 9 });
      expect(await j.consumerPositions()).toEqual({
        publishedHead: head,
        readers: [
          { consumer: "audit", position: head, updatedAt: T0 + 6 },
          { consumer: "billing", position: 1, updatedAt: T0 + 5 },
        ],
        parked: [
          {
            consumer: "billing",
            source: "order/o-1",
            checkpoint: 2,
            count: 2,
            firstParkedVersion: 4,
            oldestParkedAt: T0 + 8,
          },
          {
            consumer: "billing",
            source: "order/o-2",
            checkpoint: 0,
            count: 1,
            firstParkedVersion: 3,
            oldestParkedAt: T0 + 9,
          },
        ],
      });
    });
  });
}
