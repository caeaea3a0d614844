import { describe, expect, it } from "vitest";
import { propertyRuns } from "../support/property-runs.js";

describe("property runs: default or deep (ONCELY_DEEP=1)", () => {
  it("takes the default count unless ONCELY_DEEP is 1", () => {
    expect(propertyRuns(25, 100, {})).toBe(25);
    expect(propertyRuns(25, 100, { ONCELY_DEEP: "" })).toBe(25);
    expect(propertyRuns(25, 100, { ONCELY_DEEP: "0" })).toBe(25);
    expect(propertyRuns(25, 100, { ONCELY_DEEP: "1" })).toBe(100);
  });

  it("refuses any other value of ONCELY_DEEP, naming it", () => {
    expect(() => propertyRuns(25, 100, { ONCELY_DEEP: "yes" })).toThrow(/ONCELY_DEEP must be 1.*"yes"/);
  });
});
