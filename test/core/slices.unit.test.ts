import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ownsEverything, requireSliceCount, sliceKeyOf, sliceOf, sliceOfAddress } from "../../src/core/slices.js";

describe("slices", () => {
  it("hashes with FNV-1a, stable across releases", () => {
    // Fixed values: changing the hash would move every actor to another slice.
    expect(sliceOf("", 1 << 16)).toBe(0x811c9dc5 & 0xffff);
    // The published FNV-1a test vectors: "a" → 0xe40c292c, "foobar" → 0xbf9cf968.
    expect(sliceOf("a", 1 << 16)).toBe(0x292c);
    expect(sliceOf("foobar", 1 << 16)).toBe(0xf968);
    expect(sliceOf("foobar", 64)).toBe(0xf968 & 63);
  });

  it("keys an actor by its id, so actors sharing an id share a slice", () => {
    expect(sliceKeyOf("order/42")).toBe("42");
    expect(sliceOfAddress("order/42", 64)).toBe(sliceOfAddress("payment/42", 64));
  });

  it("splits: a key of slice k of n is in k or k + n of 2n", () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: 12 }), (key, bits) => {
        const n = 1 << bits;
        const k = sliceOf(key, n);
        expect([k, k + n]).toContain(sliceOf(key, 2 * n));
      }),
    );
  });

  it("refuses a slice count that is not a power of two", () => {
    expect(() => requireSliceCount(48)).toThrow(/power of two/);
    expect(() => ownsEverything(0)).toThrow(/power of two/);
    expect(ownsEverything(8).owns(7)).toBe(true);
  });
});
