import { describe, expect, it } from "vitest";
import { workerNodeArgs } from "../../examples/shop/demo/worker-process.js";

describe("ONCELY_WORKER_NODE_ARGS: node flags for the demo's workers", () => {
  it("splits the variable on any whitespace and drops empty pieces", () => {
    expect(workerNodeArgs({ ONCELY_WORKER_NODE_ARGS: "  --cpu-prof\t--cpu-prof-dir=/tmp/shop-prof \n" })).toEqual([
      "--cpu-prof",
      "--cpu-prof-dir=/tmp/shop-prof",
    ]);
  });

  it("gives no flag when the variable is unset or blank", () => {
    expect(workerNodeArgs({})).toEqual([]);
    expect(workerNodeArgs({ ONCELY_WORKER_NODE_ARGS: "   " })).toEqual([]);
  });
});
