import { describe, expect, it } from "vitest";
import { HostStoppedError, NotRegisteredError, WaitTimeoutError } from "../../src/errors.js";
import { CommitSignal } from "../../src/host/commit-signal.js";
import { createHost } from "../../src/index.js";
import { memoryJournal } from "../../src/testing/index.js";
import { type Checkout, checkout, paymentKey, paymentProvider } from "./fixtures/checkout.js";

function started() {
  const provider = paymentProvider();
  const host = createHost({ journal: memoryJournal(), actors: [checkout], handlers: [provider.handler], name: "h1" });
  return { host, provider };
}

describe("waitFor", () => {
  it("resolves with the state once the predicate holds, after the effect's outcome is committed", async () => {
    const { host } = started();
    await host.start();
    try {
      const waiting = host.waitFor<Checkout>("checkout/1", (s) => s.payment === "Completed", { timeoutMs: 5_000 });
      await host.send("checkout/1", { type: "Checkout", amount: 100 }, { messageId: "m1" });
      const { state, version } = await waiting;
      expect(state).toEqual({ amount: 100, payment: "Completed", paymentId: "ch_1" });
      expect(version).toBe(2);
    } finally {
      await host.stop();
    }
  });

  it("resolves at once when the state already satisfies the predicate", async () => {
    const { host } = started();
    await host.send("checkout/1", { type: "Checkout", amount: 100 });
    const { state } = await host.waitFor<Checkout>("checkout/1", (s) => s.payment === "Pending", { timeoutMs: 50 });
    expect(state.amount).toBe(100);
    await host.stop();
  });

  it("rejects with a WaitTimeoutError naming the address, after a few looks, not a busy loop", async () => {
    const journal = memoryJournal();
    let reads = 0;
    const readStream = journal.readStream.bind(journal);
    journal.readStream = (...args: Parameters<typeof readStream>) => {
      reads++;
      return readStream(...args);
    };
    const host = createHost({ journal, actors: [checkout], handlers: [paymentProvider().handler] });
    await host.send("checkout/7", { type: "Checkout", amount: 100 }); // not started: nobody pays
    const wait = host.waitFor<Checkout>("checkout/7", (s) => s.payment === "Completed", { timeoutMs: 300 });
    await expect(wait).rejects.toThrow(WaitTimeoutError);
    await expect(wait).rejects.toThrow(/checkout\/7.*version 1 does not satisfy/);
    // Polls double from 25 ms to 1 s: about 5 looks in 300 ms, never thousands.
    expect(reads).toBeGreaterThanOrEqual(2);
    expect(reads).toBeLessThan(12);
    await host.stop();
  });

  it("reads the journal only: a host that waits activates no actor (so runs no onRecovered)", async () => {
    const { host } = started();
    await host.start();
    await host.send("checkout/5", { type: "Checkout", amount: 100 });
    await host.waitForEffect(paymentKey("5"), { timeoutMs: 5_000 });
    const waiter = createHost({ journal: host.journal, actors: [checkout] });
    const { state } = await waiter.waitFor<Checkout>("checkout/5", (s) => s.payment === "Completed", { timeoutMs: 50 });
    expect(state.paymentId).toBe("ch_1");
    expect(waiter.runtime.activeCount).toBe(0);
    await waiter.stop();
    await host.stop();
  });

  it("fails at once for an actor type nobody registered", async () => {
    const { host } = started();
    await expect(host.waitFor("cart/1", () => true)).rejects.toThrow(NotRegisteredError);
    await host.stop();
  });

  it("rejects waits in progress when the host stops", async () => {
    const { host } = started();
    const wait = host.waitFor<Checkout>("checkout/1", (s) => s.payment === "Completed", { timeoutMs: 10_000 });
    await new Promise((resolve) => setTimeout(resolve, 10));
    await host.stop();
    await expect(wait).rejects.toThrow(HostStoppedError);
    await expect(wait).rejects.toThrow("the host stopped while waiting for actor checkout/1");
  });

  it("ends early with the reason of the caller's AbortSignal", async () => {
    const { host } = started();
    const abort = new AbortController();
    const wait = host.waitFor<Checkout>("checkout/1", (s) => s.payment === "Completed", {
      timeoutMs: 10_000,
      signal: abort.signal,
    });
    setTimeout(() => abort.abort(new Error("the caller gave up")), 10);
    await expect(wait).rejects.toThrow("the caller gave up");
    await host.stop();
  });

  it("rejects an invalid timeout, naming the option", async () => {
    const { host } = started();
    await expect(host.waitFor("checkout/1", () => true, { timeoutMs: -1 })).rejects.toThrow(/timeoutMs/);
    await host.stop();
  });
});

describe("waitForEffect", () => {
  it("resolves with the result once the owner recorded a success", async () => {
    const { host } = started();
    await host.start();
    const waiting = host.waitForEffect(paymentKey("2"), { timeoutMs: 5_000 });
    await host.send("checkout/2", { type: "Checkout", amount: 100 });
    const settled = await waiting;
    expect(settled).toMatchObject({ key: paymentKey("2"), status: "Completed", result: { id: "ch_1" } });
    // The outcome is in the owner's state by then: the row is done in the owner's commit.
    expect((await host.state<Checkout>("checkout/2")).state.payment).toBe("Completed");
    await host.stop();
  });

  it("resolves with Failed and the reason for a declined payment", async () => {
    const { host } = started();
    await host.start();
    await host.send("checkout/3", { type: "Checkout", amount: 50_000 });
    const settled = await host.waitForEffect(paymentKey("3"), { timeoutMs: 5_000 });
    expect(settled).toMatchObject({ status: "Failed", result: { error: "card declined" } });
    await host.stop();
  });

  it("says, at the timeout, that no such effect was requested", async () => {
    const { host } = started();
    await expect(host.waitForEffect("nope", { timeoutMs: 60 })).rejects.toThrow(
      /effect nope: no effect with this key has been requested/,
    );
    await host.stop();
  });
});

describe("CommitSignal", () => {
  it("has no listener once waits end, and wakes only the watchers of the keys a commit touched", async () => {
    const journal = memoryJournal();
    const signal = new CommitSignal(journal);
    const woken: string[] = [];
    const offA = signal.watch("a/1", () => woken.push("a"));
    const offB = signal.watch("b/1", () => woken.push("b"));
    await signal.journal.commit({
      stream: "a/1",
      expectedVersion: 0,
      events: [{ eventId: "e1", type: "X", data: {} }],
      now: 1,
    });
    expect(woken).toEqual(["a"]);
    offA();
    offB();
    expect(signal.watchers).toBe(0);
    // Every other call goes to the journal itself.
    expect(await signal.journal.streamVersion("a/1")).toBe(1);
    expect(signal.journal.backend).toBe("memory");
  });

  it("leaves no listener behind after a host's waits resolve or time out", async () => {
    const { host } = started();
    await host.send("checkout/1", { type: "Checkout", amount: 100 });
    await host.waitFor<Checkout>("checkout/1", (s) => s.amount === 100);
    await expect(host.waitForEffect(paymentKey("1"), { timeoutMs: 30 })).rejects.toThrow(WaitTimeoutError);
    expect((host as unknown as { signal: CommitSignal }).signal.watchers).toBe(0);
    await host.stop();
  });
});
