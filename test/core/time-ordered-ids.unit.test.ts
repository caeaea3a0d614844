import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { timeOrderedIds } from "../../src/core/time-ordered-ids.js";

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("time-ordered ids (UUID version 7)", () => {
  it("are version 7, variant 10, with the millisecond in the first 48 bits", () => {
    const ids = timeOrderedIds(() => 0x0123456789ab);
    const id = ids.next();
    expect(id).toMatch(V7);
    expect(id.replace(/-/g, "").slice(0, 12)).toBe("0123456789ab");
  });

  it("strictly increase for any clock, also one that stands still or goes back", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2 ** 40 }), { minLength: 2, maxLength: 300 }), (times) => {
        let i = 0;
        const ids = timeOrderedIds(() => times[i++ % times.length] as number);
        const made = times.map(() => ids.next());
        for (const id of made) expect(id).toMatch(V7);
        for (let k = 1; k < made.length; k++) expect((made[k - 1] as string) < (made[k] as string)).toBe(true);
      }),
    );
  });

  it("borrow the next millisecond when 4,096 are made in one", () => {
    const ids = timeOrderedIds(() => 1_000);
    const made = Array.from({ length: 10_000 }, () => ids.next());
    expect(new Set(made).size).toBe(made.length);
    expect([...made].sort()).toEqual(made);
    expect(made.at(-1)?.replace(/-/g, "").slice(0, 12)).not.toBe((1_000).toString(16).padStart(12, "0"));
  });

  it("differ between two generators on the same clock (62 random bits)", () => {
    const a = timeOrderedIds(() => 5);
    const b = timeOrderedIds(() => 5);
    const seen = new Set<string>();
    for (let k = 0; k < 5_000; k++) {
      seen.add(a.next());
      seen.add(b.next());
    }
    expect(seen.size).toBe(10_000);
  });
});
