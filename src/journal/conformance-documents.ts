import { type ConformanceContext, T0 } from "./conformance-fixtures.js";

/** Read-model documents written by commits. Run by `journalConformance` on every back end. */
export function documentConformance(ctx: ConformanceContext): void {
  const { describe, it, expect } = ctx.api;
  describe("documents", () => {
    it("upserts, deletes and lists documents sorted by id", async () => {
      const j = ctx.journal();
      await j.commit({
        documents: [
          { collection: "orders", id: "b", doc: { v: 1 } },
          { collection: "orders", id: "a", doc: { v: 1 } },
          { collection: "orders", id: "c", doc: { v: 1 } },
          { collection: "other", id: "a", doc: { v: 9 } },
        ],
        now: T0,
      });
      await j.commit({
        documents: [
          { collection: "orders", id: "b", doc: { v: 2 } },
          { collection: "orders", id: "c", doc: null },
          { collection: "orders", id: "z", doc: { v: 1 } },
          { collection: "orders", id: "z", doc: null },
        ],
        now: T0 + 1,
      });
      expect(await j.getDocument("orders", "b")).toEqual({
        collection: "orders",
        id: "b",
        doc: { v: 2 },
        updatedAt: T0 + 1,
      });
      expect(await j.getDocument("orders", "c")).toBeUndefined();
      expect(await j.getDocument("orders", "z")).toBeUndefined();
      expect((await j.listDocuments("orders")).map((d) => [d.id, d.doc])).toEqual([
        ["a", { v: 1 }],
        ["b", { v: 2 }],
      ]);
      expect((await j.listDocuments("orders", 1)).map((d) => d.id)).toEqual(["a"]);
      expect((await j.listDocuments("other")).map((d) => d.doc)).toEqual([{ v: 9 }]);
      expect(await j.listDocuments("none")).toEqual([]);
    });
  });
}
