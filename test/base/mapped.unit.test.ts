import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { mapped } from "../../src/base/mapped.js";

describe("mapped", () => {
  it("answers what Array.prototype.map answers, element by element and index by index", () => {
    fc.assert(
      fc.property(fc.array(fc.anything()), (items) => {
        const each = (item: unknown, index: number) => ({ item, index });
        expect(mapped(items, each)).toEqual(items.map(each));
      }),
    );
  });

  it("builds a new packed array, never the input, with no holes even when empty", () => {
    const input = [1, 2, 3];
    const out = mapped(input, (n) => n * 2);
    expect(out).not.toBe(input);
    expect(out).toEqual([2, 4, 6]);
    expect(Object.keys(mapped([], (n: number) => n))).toEqual([]);
    expect(Object.keys(out)).toEqual(["0", "1", "2"]);
  });
});
