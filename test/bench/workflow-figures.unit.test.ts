import { describe, expect, it } from "vitest";
import {
  CallLedger,
  cpuPerOrder,
  ORDER_STEPS,
  orderKey,
  parseWorkflowArgs,
  type WorkflowFigures,
} from "../../bench/workflow-figures.js";

const callAll = (ledger: CallLedger, ids: string[]) => {
  for (const id of ids) for (const step of ORDER_STEPS) ledger.record(orderKey(id, step));
};

describe("the order workflow's exactly-once check", () => {
  it("passes when every step of every order was called once", () => {
    const ledger = new CallLedger();
    callAll(ledger, ["a", "b"]);
    expect(ledger.check(["a", "b"])).toEqual({ ok: true, summary: "8/8 keys called exactly once" });
  });

  it("fails on a step called twice and names it", () => {
    const ledger = new CallLedger();
    callAll(ledger, ["a", "b"]);
    ledger.record(orderKey("b", "picklist"));
    const check = ledger.check(["a", "b"]);
    expect(check.ok).toBe(false);
    expect(check.summary).toContain("7/8");
    expect(check.summary).toContain("order:b:picklist called 2×");
  });

  it("fails on a step never called", () => {
    const ledger = new CallLedger();
    callAll(ledger, ["a"]);
    const check = ledger.check(["a", "b"]);
    expect(check.ok).toBe(false);
    expect(check.summary).toContain("order:b:charge called 0×");
  });

  it("fails on a key that no order should have called", () => {
    const ledger = new CallLedger();
    callAll(ledger, ["a"]);
    ledger.record("order:zzz:charge");
    const check = ledger.check(["a"]);
    expect(check.ok).toBe(false);
    expect(check.summary).toContain("unexpected key order:zzz:charge");
  });
});

describe("the workflow bench options", () => {
  it("default to 1,000 orders, 50 in flight, a warm-up of one in-flight's worth, 3 rounds, and read the named options", () => {
    expect(parseWorkflowArgs(["peers"])).toEqual({ orders: 1_000, inflight: 50, warmup: 50, rounds: 3 });
    expect(parseWorkflowArgs(["peers", "--orders", "20", "--rounds", "1"])).toEqual({
      orders: 20,
      inflight: 50,
      warmup: 20,
      rounds: 1,
    });
    expect(parseWorkflowArgs(["peers", "--warmup", "500"])).toMatchObject({ warmup: 500 });
  });

  it("reject a value that is not a positive integer, naming the option", () => {
    expect(() => parseWorkflowArgs(["--inflight", "0"])).toThrow("--inflight needs a positive integer, got 0");
    expect(() => parseWorkflowArgs(["--orders"])).toThrow("--orders needs a positive integer, got nothing");
  });
});

describe("CPU per order", () => {
  const figures = (cpu?: WorkflowFigures["cpu"]): WorkflowFigures => ({
    system: "s",
    orders: 500,
    inflight: 50,
    seconds: 1,
    latencies: [],
    exactlyOnce: { ok: true, summary: "" },
    ...(cpu === undefined ? {} : { cpu }),
  });

  it("divides the machine's and the process's CPU over the timed orders, in ms", () => {
    expect(cpuPerOrder(figures({ machineSeconds: 1.5, processSeconds: 0.5 }))).toEqual({ machine: 3, process: 1 });
  });

  it("is absent where the CPU could not be read", () => {
    expect(cpuPerOrder(figures())).toBeUndefined();
  });
});
