import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { IdempotencyKeyReusedError, OperationInProgressError } from "../../../src/base/errors.js";
import { sequentialIds } from "../../../src/core/clock.js";
import { IdempotentOperations } from "../../../src/effects/operations/idempotent.js";
import type { OperationStore } from "../../../src/effects/operations/types.js";
import { failed, succeeded } from "../../../src/effects/types.js";
import { SimulatedClock } from "../../../src/testing/clock.js";
import { nextOrderId } from "./ids.js";

export interface OperationStoreFactory {
  name: string;
  skip: string;
  create(): Promise<OperationStore>;
  teardown(): Promise<void>;
}

/** One suite, every store: the seed's payment_operations rules. */
export function operationsSuite(factory: OperationStoreFactory): void {
  describe.skipIf(factory.skip !== "")(`idempotent operations on ${factory.name} ${factory.skip}`, () => {
    let store: OperationStore;
    let clock: SimulatedClock;
    let ops: IdempotentOperations;
    let key: string;
    let performed: number;
    const request = { orderId: "42", amount: 1000, currency: "EUR" };
    const charge = async () => {
      performed++;
      return succeeded({ paymentId: `p-${performed}` });
    };

    beforeEach(async () => {
      store = await factory.create();
      clock = new SimulatedClock();
      ops = new IdempotentOperations({ store, clock, staleAfterMs: 60_000, ids: sequentialIds(nextOrderId()) });
      key = `op:${nextOrderId()}`;
      performed = 0;
    });
    afterAll(() => factory.teardown());

    it("the first request performs the work; a repeat gets the stored outcome without running it", async () => {
      const first = await ops.perform(key, request, charge);
      const again = await ops.perform(key, { currency: "EUR", amount: 1000, orderId: "42" }, charge);
      expect(first).toEqual({ outcome: succeeded({ paymentId: "p-1" }), replayed: false, superseded: false });
      expect(again).toEqual({ outcome: succeeded({ paymentId: "p-1" }), replayed: true, superseded: false });
      expect(performed).toBe(1);
      expect(await store.get(key)).toMatchObject({
        status: "done",
        attempt: 1,
        outcome: succeeded({ paymentId: "p-1" }),
      });
    });

    it("a definite failure is stored and replayed too", async () => {
      await ops.perform(key, request, async () => failed("insufficient funds"));
      expect((await ops.perform(key, request, charge)).outcome).toEqual(failed("insufficient funds"));
      expect(performed).toBe(0);
    });

    it("the same key with a different request is refused", async () => {
      await ops.perform(key, request, charge);
      await expect(ops.perform(key, { ...request, amount: 999 }, charge)).rejects.toBeInstanceOf(
        IdempotencyKeyReusedError,
      );
      expect(performed).toBe(1);
    });

    it("concurrent requests: exactly one performs, the others see it in progress, none runs twice", async () => {
      let release = () => {};
      const gate = new Promise<void>((r) => {
        release = r;
      });
      const slow = ops.perform(key, request, async () => {
        await gate;
        return charge();
      });
      await new Promise((r) => setTimeout(r, 20));
      const others = await Promise.allSettled([1, 2, 3].map(() => ops.perform(key, request, charge)));
      for (const other of others) {
        expect(other.status).toBe("rejected");
        expect((other as PromiseRejectedResult).reason).toBeInstanceOf(OperationInProgressError);
      }
      release();
      expect((await slow).outcome).toEqual(succeeded({ paymentId: "p-1" }));
      expect(performed).toBe(1);
    });

    it("racing inserts: one winner, whatever the interleaving", async () => {
      const results = await Promise.allSettled(Array.from({ length: 8 }, () => ops.perform(key, request, charge)));
      const won = results.filter((r) => r.status === "fulfilled" && !r.value.replayed);
      expect(won).toHaveLength(1);
      expect(performed).toBe(1);
    });

    it("a winner that crashed mid-work: in progress until staleAfterMs, then taken over once", async () => {
      await expect(
        ops.perform(key, request, async () => {
          throw new Error("process died mid-work");
        }),
      ).rejects.toThrow("process died");
      await expect(ops.perform(key, request, charge)).rejects.toBeInstanceOf(OperationInProgressError);
      clock.advance(60_000);
      const takeover = await ops.perform(key, request, async ({ attempt, takeover }) => {
        expect([attempt, takeover]).toEqual([2, true]);
        return charge();
      });
      expect(takeover).toMatchObject({ replayed: false, superseded: false });
      expect(await store.get(key)).toMatchObject({ status: "done", attempt: 2 });
      expect((await ops.perform(key, request, charge)).replayed).toBe(true);
      expect(performed).toBe(1);
    });

    it("a slow winner overtaken after staleAfterMs cannot overwrite the stored outcome (fencing token)", async () => {
      let release = () => {};
      const gate = new Promise<void>((r) => {
        release = r;
      });
      const slow = ops.perform(key, request, async () => {
        await gate;
        return succeeded({ paymentId: "slow" });
      });
      await new Promise((r) => setTimeout(r, 20));
      clock.advance(60_000);
      const fast = await ops.perform(key, request, async () => succeeded({ paymentId: "fast" }));
      release();
      const late = await slow;
      expect(fast.outcome).toEqual(succeeded({ paymentId: "fast" }));
      expect(late).toEqual({ outcome: succeeded({ paymentId: "fast" }), replayed: false, superseded: true });
      expect((await store.get(key))?.outcome).toEqual(succeeded({ paymentId: "fast" }));
    });

    it("releaseOnThrow frees the key at once for all-or-nothing work", async () => {
      await expect(
        ops.perform(
          key,
          request,
          async () => {
            throw new Error("validation failed before anything happened");
          },
          { releaseOnThrow: true },
        ),
      ).rejects.toThrow();
      expect(await store.get(key)).toBeUndefined();
      expect((await ops.perform(key, request, charge)).replayed).toBe(false);
    });

    it("pruning removes only done operations completed before the cutoff", async () => {
      const old = `${key}:old`;
      await ops.perform(old, request, charge);
      clock.advance(10_000);
      await ops.perform(key, request, charge);
      const hanging = `${key}:hanging`;
      await ops
        .perform(hanging, request, async () => {
          throw new Error("crash");
        })
        .catch(() => {});
      expect(await ops.prune(clock.now() - 5_000)).toBeGreaterThanOrEqual(1);
      expect(await store.get(old)).toBeUndefined();
      expect(await store.get(key)).toBeDefined();
      expect((await store.get(hanging))?.status).toBe("processing");
    });
  });
}
