import { describe, expect, it } from "vitest";
import type { Logger } from "../../src/core/logger.js";
import { WarnThrottle } from "../../src/core/warn-throttle.js";

function recording(): { logger: Logger; warned: { fields: object; message: string | undefined }[] } {
  const warned: { fields: object; message: string | undefined }[] = [];
  const nothing = () => {};
  return {
    warned,
    logger: {
      debug: nothing,
      info: nothing,
      error: nothing,
      warn: (fields, message) => warned.push({ fields, message }),
    },
  };
}

describe("WarnThrottle", () => {
  it("warns once per interval and key, then says how many it left out", () => {
    let now = 1_000;
    const { logger, warned } = recording();
    const throttle = new WarnThrottle(logger, { now: () => now }, 10_000);
    for (let i = 0; i < 50; i++) throttle.warn("peer-b unreachable", { i }, "fell back");
    throttle.warn("peer-c unreachable", { i: "c" }, "fell back");
    expect(warned).toEqual([
      { fields: { i: 0 }, message: "fell back" },
      { fields: { i: "c" }, message: "fell back" },
    ]);
    now += 9_999;
    throttle.warn("peer-b unreachable", { i: 50 }, "fell back");
    expect(warned).toHaveLength(2);
    now += 1;
    throttle.warn("peer-b unreachable", { i: 51 }, "fell back");
    expect(warned[2]).toEqual({ fields: { i: 51, suppressed: 50 }, message: "fell back" });
    // Quiet for a whole interval: a new outage is warned at once, with nothing left out.
    now += 60_000;
    throttle.warn("peer-b unreachable", { i: 52 }, "fell back");
    expect(warned[3]).toEqual({ fields: { i: 52 }, message: "fell back" });
  });
});
