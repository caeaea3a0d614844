import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import { StorageUnavailableError } from "../../src/base/errors.js";
import type { Journal } from "../../src/journal/types.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { sqliteJournal } from "../../src/sqlite/index.js";
import { FakePaymentProvider, paymentHandler } from "../effects/fixtures/fake-provider.js";
import { paymentActor, paymentKey } from "../effects/fixtures/payment-actor.js";
import { World } from "../effects/fixtures/world.js";
import { holdInboxKey, terminateWaitingBatch } from "../support/pg-batch-faults.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";

/**
 * Crash-matrix cells for the windows group commit and hand-over opened, on each SQL back end
 * (the memory journal has no batches). Each cell places many orders in ONE turn of the event loop,
 * so their commits travel in one batch, puts the fault in the batch's window, recovers as a
 * restarted process or a retrying client would, and audits against the provider's own ledger:
 * every order's payment key charged exactly once, every order completed, nothing lost.
 */
const postgres = await probePostgres();
const dir = mkdtempSync(join(tmpdir(), "oncely-group-cells-"));
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

interface Backend {
  name: "sqlite" | "postgres";
  skip: boolean;
  /** A fresh store; `open()` gives one more journal (another process) on the same store. */
  fresh(label: string): Promise<{ open: (options?: { pool?: pg.Pool }) => Promise<Journal> }>;
}

const backends: Backend[] = [
  {
    name: "sqlite",
    skip: false,
    async fresh(label) {
      const path = join(dir, `${label}.db`);
      return {
        open: async () => {
          const journal = sqliteJournal({ path });
          await journal.migrate();
          cleanups.push(() => journal.close());
          return journal;
        },
      };
    },
  },
  {
    name: "postgres",
    skip: !postgres.available,
    async fresh(label) {
      const { schema, drop } = await freshPgSchema(`gc_${label}`);
      cleanups.push(drop);
      return {
        open: async (options = {}) => {
          const journal = postgresJournal({ connectionString: PG_URL, schema, ...options });
          await journal.migrate();
          cleanups.push(() => journal.close());
          return journal;
        },
      };
    },
  },
];

const ORDERS = 12;
let cells = 0;
const orderIds = (tag: string) => Array.from({ length: ORDERS }, (_, i) => `${tag}${++cells}-${i}`);
/** Load each order's (empty) state first, so the commits of the orders are made in the same turn. */
const warm = async (world: World, orders: string[]) => {
  for (const order of orders) await world.node.runtime.state(`order/${order}`);
};
const largestBatch = (journal: Journal) =>
  (journal as unknown as { groupCommitStats: { largest: number } }).groupCommitStats.largest;
const place = (world: World, order: string) =>
  world.node.runtime.send(`order/${order}`, { type: "RequestPayment", amount: 500 }, { messageId: `place-${order}` });

/** The audit: one charge per order key at the provider, and each order's payment completed once. */
async function audit(world: World, provider: FakePaymentProvider, orders: string[]): Promise<void> {
  for (const order of orders) {
    expect(provider.chargesFor(paymentKey(order)), `charges for ${order}`).toBe(1);
    const events = await world.events(`order/${order}`);
    expect(
      events.filter((e) => e === "PaymentRequested"),
      `order ${order}`,
    ).toHaveLength(1);
    expect(
      events.filter((e) => e === "PaymentCompleted"),
      `order ${order}`,
    ).toHaveLength(1);
  }
}

for (const backend of backends) {
  describe.skipIf(backend.skip)(`group-commit crash cells on ${backend.name}`, () => {
    it("a process dies with a group commit in flight and its handed-over rows not yet run: a new process takes them over after the lease, once each", async () => {
      const store = await backend.fresh(`inflight_${process.pid}`);
      const journal = await store.open();
      const provider = new FakePaymentProvider(true);
      const world = new World(journal, [paymentActor], [paymentHandler(provider)], { pollIntervalMs: 1e9 });
      const dying = world.node;
      // The process dies before any handed-over row reaches its handler.
      dying.faults.arm("dispatch.beforeHandler", { times: Number.POSITIVE_INFINITY });
      dying.dispatcher.start();
      const orders = orderIds("inflight");
      await warm(world, orders);
      // One batch; the process dies with it in flight, so no caller is ever told its answer.
      const lost = Promise.allSettled(orders.map((order) => place(world, order)));
      await vi.waitFor(() =>
        expect(dying.faults.fired.filter((p) => p === "dispatch.beforeHandler")).toHaveLength(ORDERS),
      );
      await dying.dispatcher.stop();
      await lost;
      expect(dying.dispatcher.stats.handedOver).toBe(ORDERS);
      expect(largestBatch(journal)).toBeGreaterThanOrEqual(ORDERS);
      expect(provider.calls).toEqual([]);

      // A new process: the dead one's leases run out; its clients retry with the same message ids.
      const next = world.crash();
      for (const order of orders) await place(world, order);
      await world.drain();
      expect(next.dispatcher.stats.handedOver).toBe(0);
      await audit(world, provider, orders);
    });

    it("one commit of a batch conflicts and the others land: the loser decides again on the fresh state, nothing is charged twice", async () => {
      const store = await backend.fresh(`conflict_${process.pid}`);
      const journal = await store.open();
      // Another process on the same store (PostgreSQL: its own journal, so its batch races ours).
      const otherJournal = backend.name === "postgres" ? await store.open() : journal;
      const provider = new FakePaymentProvider(true);
      const world = new World(journal, [paymentActor], [paymentHandler(provider)], { pollIntervalMs: 1e9 });
      const other = new World(otherJournal, [paymentActor], [paymentHandler(provider)], { pollIntervalMs: 1e9 });
      const orders = orderIds("conflict");
      // Warm both caches at version 0, then both place the first order while ours places them all.
      await warm(world, orders);
      await warm(other, orders.slice(0, 1));
      const outcomes = await Promise.allSettled([
        ...orders.map((order) => place(world, order)),
        other.node.runtime.send(
          `order/${orders[0]}`,
          { type: "RequestPayment", amount: 500 },
          { messageId: `other-${orders[0]}` },
        ),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(outcomes.map(() => "fulfilled"));
      expect(largestBatch(journal)).toBeGreaterThanOrEqual(backend.name === "postgres" ? ORDERS : ORDERS + 1);
      await world.drain();
      await other.drain();
      await audit(world, provider, orders);
    });

    it("a process stalls in its handed-over handlers past the lease: another takes them over and records each outcome; the stalled one's outcomes, one batch later, are each answered from the done row", async () => {
      const store = await backend.fresh(`stalled_${process.pid}`);
      const journal = await store.open();
      const otherJournal = backend.name === "postgres" ? await store.open() : journal;
      const provider = new FakePaymentProvider(true);
      // The other process has a clock of its own: the stalled one's time (and its calls' timeout) stands still.
      const handlers = [paymentHandler(provider)];
      const world = new World(journal, [paymentActor], handlers, { pollIntervalMs: 1e9, concurrency: ORDERS });
      const stalled = world.node;
      stalled.dispatcher.start();
      let release = () => {};
      provider.holdEvery = new Promise<void>((resolve) => {
        release = resolve;
      });
      const orders = orderIds("stalled");
      await warm(world, orders);
      await Promise.all(orders.map((order) => place(world, order)));
      await vi.waitFor(() => expect(provider.calls).toHaveLength(ORDERS));
      expect(stalled.dispatcher.stats.handedOver).toBe(ORDERS);
      provider.holdEvery = undefined;

      // Another process, once the leases ran out: it runs each effect (the provider answers from its
      // dedup) and records each outcome by marking the row done.
      const other = new World(otherJournal, [paymentActor], handlers, { pollIntervalMs: 1e9 });
      other.clock.set(world.clock.now() + stalled.dispatcher.leaseMs + 1);
      await other.drain();
      await audit(world, provider, orders);

      // The stalled calls answer now, together: their outcomes travel in one batch, each a duplicate.
      const before = (journal as unknown as { groupCommitStats: { batches: number } }).groupCommitStats.batches;
      release();
      await vi.waitFor(() => expect(stalled.dispatcher.stats.completed).toBe(ORDERS));
      await stalled.dispatcher.stop();
      expect(stalled.runtime.stats.duplicates).toBe(ORDERS);
      expect(largestBatch(journal)).toBeGreaterThanOrEqual(ORDERS);
      expect(
        (journal as unknown as { groupCommitStats: { batches: number } }).groupCommitStats.batches,
      ).toBeGreaterThan(before);
      await audit(world, provider, orders);
      for (const order of orders) {
        expect(await journal.getOutbox(paymentKey(order))).toMatchObject({ status: "done", outcome: "completed" });
        // The row was the record: no inbox row beside it.
        expect(await journal.getInbox(`order/${order}`, `${paymentKey(order)}#outcome`)).toBeUndefined();
      }
    });

    if (backend.name === "postgres") {
      it("the connection is lost during a batch's COMMIT: every commit of it is ambiguous, each retry with its own message id lands once", async () => {
        const store = await backend.fresh(`lost_${process.pid}`);
        const name = `oncely-gc-cell-${process.pid}-${Date.now()}`;
        const pool = new pg.Pool({ connectionString: PG_URL, max: 4, application_name: name });
        cleanups.push(() => pool.end());
        const journal = await store.open({ pool });
        const provider = new FakePaymentProvider(true);
        const world = new World(journal, [paymentActor], [paymentHandler(provider)], { pollIntervalMs: 1e9 });
        const orders = orderIds("lost");
        const last = orders[ORDERS - 1] as string;
        // Hold the last order's inbox key in an open transaction: the batch waits on it, in flight.
        const schema = (journal as unknown as { tables: { qschema: string } }).tables.qschema;
        const release = await holdInboxKey(schema, `order/${last}`, `place-${last}`);
        cleanups.push(release);
        await warm(world, orders);
        const first = Promise.allSettled(orders.map((order) => place(world, order)));
        await terminateWaitingBatch(name, "the batch to wait on the held inbox key");
        const outcomes = await first;
        expect(largestBatch(journal)).toBe(ORDERS);
        for (const outcome of outcomes) {
          expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(StorageUnavailableError);
        }
        await release();
        // Each client retries with its own message id; the batch was rolled back, so each lands now.
        for (const order of orders) await place(world, order);
        await world.drain();
        await audit(world, provider, orders);
      });
    }
  });
}
