import { describe, expect, it } from "vitest";
import { InjectedFault } from "../../src/base/errors.js";
import { ArmableFaults, noFaults } from "../../src/core/faults.js";

/**
 * A fault point that is not armed answers nothing to wait for (the runtime then does not await
 * at all); an armed one answers a promise that does what the point was armed to do.
 */
describe("fault points", () => {
  it("answer undefined when nothing is armed, and when an armed point is skipped", () => {
    expect(noFaults.hit("commit.before")).toBeUndefined();
    const faults = new ArmableFaults().arm("commit.after", { after: 1 });
    expect(faults.hit("commit.before")).toBeUndefined();
    expect(faults.hit("commit.after")).toBeUndefined();
    expect(faults.fired).toEqual([]);
  });

  it("answer a promise rejected with InjectedFault when armed, once, then nothing", async () => {
    const faults = new ArmableFaults().arm("commit.after");
    const armed = faults.hit("commit.after");
    await expect(armed).rejects.toBeInstanceOf(InjectedFault);
    expect(faults.hit("commit.after")).toBeUndefined();
    expect(faults.fired).toEqual(["commit.after"]);
  });

  it("wait for an armed action that takes time, and reject when it throws synchronously", async () => {
    const order: string[] = [];
    const faults = new ArmableFaults()
      .arm("commit.before", {
        action: async () => {
          await new Promise((r) => setImmediate(r));
          order.push("action");
        },
      })
      .arm("command.accepted", {
        action: () => {
          throw new Error("sync");
        },
      });
    await faults.hit("commit.before");
    order.push("after");
    expect(order).toEqual(["action", "after"]);
    await expect(faults.hit("command.accepted")).rejects.toThrow("sync");
  });
});
