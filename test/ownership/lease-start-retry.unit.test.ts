import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { StorageUnavailableError } from "../../src/base/errors.js";
import { seededRandom } from "../../src/core/clock.js";
import type { Logger } from "../../src/core/logger.js";
import { memoryJournal } from "../../src/journal/memory.js";
import type { Journal } from "../../src/journal/types.js";
import { SliceLeaseManager } from "../../src/ownership/lease-manager.js";

/** A journal whose first `failures` commits fail as a cut connection would (retryable), or with `error`. */
function blinking(failures: number, error: () => Error = () => new StorageUnavailableError("connection terminated")) {
  const journal = memoryJournal({ sliceCount: 4 });
  let left = failures;
  return new Proxy(journal, {
    get(target, key, receiver) {
      if (key === "commit") {
        return (...args: Parameters<Journal["commit"]>) => {
          if (left > 0) {
            left--;
            return Promise.reject(error());
          }
          return target.commit(...args);
        };
      }
      const value = Reflect.get(target, key, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as Journal;
}

const warnings: string[] = [];
const logger: Logger = { debug() {}, info() {}, error() {}, warn: (_o, msg) => warnings.push(String(msg)) };

const manager = (journal: Journal, registry: Registry) =>
  new SliceLeaseManager({
    journal,
    workerId: "w1",
    sliceCount: 4,
    leaseMs: 3_000,
    random: seededRandom(3),
    logger,
    registry,
  });

describe("a lease manager starting while its journal blinks", () => {
  it("tries a failed round again, warns and counts it, and starts owning its slices", async () => {
    warnings.length = 0;
    const registry = new Registry();
    const leases = manager(blinking(2), registry);
    await leases.start();
    try {
      expect([0, 1, 2, 3].filter((s) => leases.owns(s))).toEqual([0, 1, 2, 3]);
      expect(warnings.filter((w) => w.includes("failed at start"))).toHaveLength(2);
      const failed = await registry.getSingleMetric("oncely_slice_lease_rounds_failed_total")?.get();
      expect(failed?.values[0]?.value).toBe(2);
    } finally {
      await leases.stop();
    }
  });

  it("still fails its start on an error no retry can mend", async () => {
    const leases = manager(
      blinking(1, () => new TypeError("a bug")),
      new Registry(),
    );
    await expect(leases.start()).rejects.toThrow("a bug");
    await leases.stop();
  });
});
