import fc from "fast-check";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { defineActor } from "../../src/core/actor.js";
import { silentLogger } from "../../src/core/logger.js";
import { recover } from "../../src/core/recovery.js";
import { createRuntime } from "../../src/core/runtime.js";
import { snapshotMetrics } from "../../src/core/snapshot-metrics.js";
import { UpcastError, VersionTooNewError } from "../../src/core/upcast.js";
import { Dispatcher, type DispatcherOptions } from "../../src/effects/dispatcher.js";
import { memoryJournal } from "../../src/journal/memory.js";
import type { Journal } from "../../src/journal/types.js";
import { SimulatedClock } from "../../src/testing/clock.js";
import { chargeHandlerV1, chargeKey, evolveV1, initialV1, type OrderV1Event, orderV1 } from "./fixtures/orders-v1.js";
import { chargeHandlerV2, type OrderV2State, orderV2, V2_EVENTS } from "./fixtures/orders-v2.js";
import { inProcessClient, ProviderLedger } from "./fixtures/provider.js";

const place = { type: "PlaceOrder", customerEmail: "ann@example.com", amount: 1200 } as const;
const charged = (id: string) => ({
  type: "oncely.effect.succeeded" as const,
  key: chargeKey(id),
  kind: "charge",
  result: { id: `ch_${id}` },
  attempt: 1,
  via: "run" as const,
});

async function placedUnderV1(journal: Journal, ...ids: string[]) {
  const v1 = createRuntime({ journal, actors: [orderV1] });
  for (const id of ids) {
    await v1.send(`order/${id}`, place);
    await v1.send(`order/${id}`, charged(id));
  }
}

describe("event upcasting", () => {
  it("reads a stream written by release 1 in release 2's shapes, writes new events at the current version, rewrites nothing", async () => {
    const journal = memoryJournal();
    await placedUnderV1(journal, "o1");
    const stored = await journal.readStream("order/o1");
    const v2 = createRuntime({ journal, actors: [orderV2] });
    const { state } = await v2.state<OrderV2State>("order/o1");
    expect(state).toMatchObject({ stage: "mailing", email: "ann@example.com", chargeId: "ch_o1", channel: "web" });

    await v2.send("order/n1", { type: "PlaceOrder", email: "bo@example.com", amount: 5, channel: "app" });
    const placed = (await journal.readStream("order/n1"))[0];
    expect(placed).toMatchObject({ type: "OrderPlaced", schemaVersion: 2, data: { email: "bo@example.com" } });
    expect(await journal.readStream("order/o1")).toEqual(stored);
    expect(stored[0]).toMatchObject({ schemaVersion: 1, data: { customerEmail: "ann@example.com" } });
  });

  it("a version with no upcaster path fails recovery of that actor only, naming actor, type and versions", async () => {
    const journal = memoryJournal();
    await placedUnderV1(journal, "o1");
    await createRuntime({ journal, actors: [orderV1] }).send("order/o2", place);
    // No snapshot: the one release 1 took (at version 3) holds the Charged event and would hide it.
    const { snapshot: _, ...withoutSnapshots } = orderV2;
    const noPath = defineActor({ ...withoutSnapshots, events: { ...V2_EVENTS, Charged: { version: 2 } } });
    const runtime = createRuntime({ journal, actors: [noPath] });

    const error = await runtime.state("order/o1").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpcastError);
    expect((error as Error).message).toBe(
      "actor order/o1: cannot read Charged at version 1 as version 2: no upcaster from version 1",
    );
    expect((error as UpcastError).retryable).toBe(false);
    expect((await runtime.state<OrderV2State>("order/o2")).state.stage).toBe("charging");
    expect(await journal.streamVersion("order/o1")).toBe(4);
  });

  it("a release-1 worker decides nothing on a stream release 2 wrote: the command fails retryably and release 2 takes it", async () => {
    const journal = memoryJournal();
    const v2 = createRuntime({ journal, actors: [orderV2] });
    await v2.send("order/n1", { type: "PlaceOrder", email: "bo@example.com", amount: 5, channel: "app" });
    const v1 = createRuntime({ journal, actors: [orderV1] });
    const risk = { ...charged("n1"), key: "order:n1:risk", kind: "risk", result: { score: 1 } };

    const refused = await v1.send("order/n1", risk, { messageId: "risk-outcome" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(VersionTooNewError);
    expect((refused as Error).message).toBe(
      "actor order/n1: OrderPlaced is at version 2, this code knows up to version 1; leaving it to a newer worker",
    );
    expect((refused as VersionTooNewError).retryable).toBe(true);
    expect(await journal.streamVersion("order/n1")).toBe(2);
    expect(await journal.getInbox("order/n1", "risk-outcome")).toBeUndefined();

    const taken = await v2.send("order/n1", risk, { messageId: "risk-outcome" });
    expect(taken.events.map((e) => e.type)).toEqual(["RiskCleared", "ChargeRequested"]);
  });

  it("an actor that declares its events treats an undeclared type as written by newer code", async () => {
    const journal = memoryJournal();
    await journal.commit({
      stream: "order/x",
      expectedVersion: 0,
      events: [{ eventId: "f1", type: "FraudFlagged", data: { type: "FraudFlagged" } }],
      now: 0,
    });
    const error = await createRuntime({ journal, actors: [orderV2] })
      .state("order/x")
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VersionTooNewError);
    expect((error as Error).message).toContain("FraudFlagged (version 1) is a type this code does not know");
  });

  it("refuses a declaration with an upcaster outside 1..version-1 when the runtime starts", () => {
    const bad = defineActor({
      ...orderV2,
      events: { ...V2_EVENTS, Charged: { version: 2, upcast: { 2: (e) => e } } },
    });
    expect(() => createRuntime({ journal: memoryJournal(), actors: [bad] })).toThrow(
      'actor type "order": Charged declares an upcaster from version 2; steps go from 1 up to 1',
    );
  });
});

describe("snapshots at an older state version", () => {
  it("are migrated by the declared function (counted), giving the state a full replay gives", async () => {
    const journal = memoryJournal();
    await placedUnderV1(journal, "o1");
    expect((await journal.latestSnapshot("order/o1"))?.schemaVersion).toBe(1);
    const metrics = snapshotMetrics(new Registry());
    const migrated = await recover(journal, orderV2, "order/o1", "o1", silentLogger, metrics);
    const { snapshot: _, ...withoutSnapshots } = orderV2;
    const full = await recover(journal, withoutSnapshots, "order/o1", "o1", silentLogger, metrics);
    expect(migrated.fromSnapshot).toBe(true);
    expect(migrated.state).toEqual(full.state);
    expect(await metrics.registry.getSingleMetricAsString("oncely_snapshot_migrated_total")).toContain(
      'oncely_snapshot_migrated_total{actor_type="order"} 1',
    );
  });

  it("are ignored (counted) without a migration, and the stream is replayed", async () => {
    const journal = memoryJournal();
    await placedUnderV1(journal, "o1");
    const metrics = snapshotMetrics(new Registry());
    const noMigrate = defineActor({ ...orderV2, snapshot: { every: 3, schemaVersion: 2 } });
    const recovered = await recover(journal, noMigrate, "order/o1", "o1", silentLogger, metrics);
    expect(recovered).toMatchObject({ fromSnapshot: false, version: 4, state: { chargeId: "ch_o1" } });
    expect(await metrics.registry.getSingleMetricAsString("oncely_snapshot_ignored_total")).toContain(
      'oncely_snapshot_ignored_total{actor_type="order"} 1',
    );
  });
});

describe("effect inputs requested by older code", () => {
  const dispatcher = (
    journal: Journal,
    runtime: ReturnType<typeof createRuntime>,
    handler: DispatcherOptions["handlers"],
    owner: string,
  ) => new Dispatcher({ journal, runtime, owner, handlers: handler ?? [] });

  it("run through the handler's input upcaster, never misread", async () => {
    const journal = memoryJournal();
    await createRuntime({ journal, actors: [orderV1] }).send("order/o1", place);
    const ledger = new ProviderLedger();
    const v2 = createRuntime({ journal, actors: [orderV2] });
    await dispatcher(journal, v2, [chargeHandlerV2(inProcessClient(ledger))], "v2").runOnce();
    expect(ledger.charges.get(chargeKey("o1"))).toMatchObject({ amountMinor: 1200, email: "ann@example.com" });
    expect((await v2.state<OrderV2State>("order/o1")).state.stage).toBe("mailing");
  });

  it("requested under a kind since renamed run through the handler that declares it a former kind", async () => {
    const journal = memoryJournal();
    const v1 = createRuntime({ journal, actors: [orderV1] });
    await v1.send("order/o1", place);
    const ledger = new ProviderLedger();
    const renamed = { ...chargeHandlerV2(inProcessClient(ledger)), kind: "card-charge", formerKinds: ["charge"] };
    await dispatcher(journal, v1, [renamed], "v2").runOnce();
    expect(ledger.charges.get(chargeKey("o1"))).toMatchObject({ amountMinor: 1200 });
    expect(await journal.getOutbox(chargeKey("o1"))).toMatchObject({
      kind: "charge",
      status: "done",
      outcome: "completed",
    });
  });

  it("with no upcaster path go to the reconciliation queue without running", async () => {
    const journal = memoryJournal();
    const v1 = createRuntime({ journal, actors: [orderV1] });
    await v1.send("order/o1", place);
    const ledger = new ProviderLedger();
    const strict = { ...chargeHandlerV2(inProcessClient(ledger)), upcastInput: {} };
    await dispatcher(journal, v1, [strict], "v2").runOnce();
    const row = await journal.getOutbox(chargeKey("o1"));
    expect(row?.status).toBe("reconcile");
    expect(row?.lastError).toBe(
      "effect input unreadable: effect order:o1:charge: cannot read charge input at version 1 as version 2: no upcaster from version 1",
    );
    expect(ledger.requests.size).toBe(0);
    expect((await journal.readStream("order/o1")).map((e) => e.type)).toContain("EffectNeedsReconciliation");
  });

  it("newer than the handler knows are left to a newer dispatcher", async () => {
    const journal = memoryJournal();
    const ledger = new ProviderLedger();
    const v2 = createRuntime({ journal, actors: [orderV2] });
    await v2.send("order/n1", { type: "PlaceOrder", email: "bo@example.com", amount: 5, channel: "app" });
    await v2.send("order/n1", { ...charged("n1"), key: "order:n1:risk", kind: "risk", result: { score: 1 } });
    const v1 = createRuntime({ journal, actors: [orderV1] });
    await dispatcher(journal, v1, [chargeHandlerV1(inProcessClient(ledger))], "v1").runOnce();
    const row = await journal.getOutbox(chargeKey("n1"));
    expect(row).toMatchObject({ status: "pending", attempts: 0 });
    expect(row?.lastError).toContain("charge input is at version 2, this code knows up to version 1");
    expect(ledger.requests.size).toBe(0);
  });
});

describe("actor-to-actor messages during a rolling upgrade", () => {
  it("a message to a stream written by newer code is not buried by an older dispatcher; a newer one delivers it", async () => {
    const journal = memoryJournal();
    const clock = new SimulatedClock(0);
    const nudger = defineActor<null, { type: "Nudge" }, { type: "Nudged" }>({
      type: "nudger",
      initialState: () => null,
      evolve: () => null,
      decide: () => ({
        events: [{ type: "Nudged" }],
        send: [
          {
            to: "order/n1",
            id: "nudge:n1",
            command: { type: "PlaceOrder", email: "bo@example.com", amount: 5, channel: "app" },
          },
        ],
      }),
    });
    const v2 = createRuntime({ journal, clock, actors: [orderV2, nudger] });
    await v2.send("order/n1", { type: "PlaceOrder", email: "bo@example.com", amount: 5, channel: "app" });
    const v1 = createRuntime({ journal, clock, actors: [orderV1, nudger] });
    await v1.send("nudger/a", { type: "Nudge" });
    const old = new Dispatcher({ journal, runtime: v1, owner: "v1", clock, messageRetry: { maxAttempts: 2 } });
    for (let i = 0; i < 5; i++) {
      await old.runOnce();
      clock.advance(600_000);
    }
    expect(await journal.getOutbox("nudge:n1")).toMatchObject({ status: "pending", attempts: 0 });
    await new Dispatcher({ journal, runtime: v2, owner: "v2", clock }).runOnce();
    expect(await journal.getOutbox("nudge:n1")).toMatchObject({ status: "done", outcome: "delivered" });
  });
});

describe("reading release 1 streams under release 2, for any stream", () => {
  const placed = fc.record({
    type: fc.constant("OrderPlaced" as const),
    orderId: fc.constant("p"),
    customerEmail: fc.emailAddress(),
    amount: fc.nat(),
  });
  const v1Event: fc.Arbitrary<OrderV1Event> = fc.oneof(
    placed,
    fc.record({ type: fc.constant("Charged" as const), key: fc.constant(chargeKey("p")), paymentId: fc.string() }),
    fc.record({ type: fc.constant("ConfirmationSent" as const), key: fc.string(), messageId: fc.string() }),
    fc.record({ type: fc.constant("ChargeFailed" as const), key: fc.string(), reason: fc.string() }),
  );

  it("a release 1 snapshot migrated, plus the tail, equals a full replay; the stored rows stay as written", async () => {
    const { snapshot: _, ...withoutSnapshots } = orderV2;
    await fc.assert(
      // A stream as release 1 writes it: placed first, then anything.
      fc.asyncProperty(placed, fc.array(v1Event, { maxLength: 30 }), fc.nat(), async (first, rest, cut) => {
        const events = [first, ...rest];
        const journal = memoryJournal();
        await journal.commit({
          stream: "order/p",
          expectedVersion: 0,
          events: events.map((data, i) => ({ eventId: `e${i}`, type: data.type, data })),
          now: 0,
        });
        const at = cut % (events.length + 1);
        const v1State = events.slice(0, at).reduce(evolveV1, initialV1("p"));
        await journal.commit({
          stream: "order/p",
          snapshot: { version: at, schemaVersion: 1, state: v1State },
          now: 0,
        });
        const stored = await journal.readStream("order/p");
        const migrated = await recover(journal, orderV2, "order/p", "p", silentLogger);
        const full = await recover(journal, withoutSnapshots, "order/p", "p", silentLogger);
        expect(migrated.fromSnapshot).toBe(true);
        expect(migrated.state).toEqual(full.state);
        expect(await journal.readStream("order/p")).toEqual(stored);
      }),
      { numRuns: 150 },
    );
  });
});
