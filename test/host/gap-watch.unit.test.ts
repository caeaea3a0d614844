import { describe, expect, it, vi } from "vitest";
import {
  createHost,
  type GapAlert,
  InProcessTransport,
  InvalidInputError,
  type ReconcileHook,
} from "../../src/index.js";
import { memoryJournal, SimulatedClock } from "../../src/testing/index.js";
import { paidView } from "./fixtures/checkout.js";
import { tick, ticker, ticksView } from "./fixtures/ticks.js";

const GAP_TIMEOUT_MS = 60_000;

/** A host with one sequenced consumer on an in-process transport, all on a simulated clock. */
function hostWith(options: { host?: number | false; consumer?: number | false; reconcile?: ReconcileHook } = {}) {
  const clock = new SimulatedClock();
  const journal = memoryJournal();
  const transport = new InProcessTransport({ clock });
  const host = createHost({
    journal,
    actors: [ticker("ledger")],
    clock,
    ...(options.host === undefined ? {} : { gapCheckEveryMs: options.host }),
    consumers: [
      {
        name: "ticks",
        handler: ticksView,
        mode: "sequenced",
        gapTimeoutMs: GAP_TIMEOUT_MS,
        subjects: ["oncely.>"],
        transport,
        ...(options.consumer === undefined ? {} : { gapCheckEveryMs: options.consumer }),
        ...(options.reconcile === undefined ? {} : { reconcile: options.reconcile }),
      },
    ],
  });
  const consumer = host.consumers[0];
  if (!consumer) throw new Error("no consumer");
  return { clock, journal, transport, host, consumer };
}

/** Version 1 and 3 of `ledger/a`: 3 parks behind the gap at 2. */
async function openGap({ transport, consumer }: ReturnType<typeof hostWith>): Promise<void> {
  await transport.publish(tick("ledger", "a", 1), "oncely.ledger.Ticked");
  await transport.publish(tick("ledger", "a", 3), "oncely.ledger.Ticked");
  await vi.waitFor(() => expect(consumer.stats).toMatchObject({ applied: 1, parked: 1 }));
}

/** Let the background work woken by a clock advance run (real time; nothing here is timed). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe("the host watches the gaps of its sequenced consumers", () => {
  it("alerts on a gap open past its timeout with no call from the application, by default", async () => {
    const fx = hostWith();
    await fx.host.start();
    await openGap(fx);
    fx.clock.advance(GAP_TIMEOUT_MS);
    await vi.waitFor(async () => expect(await fx.consumer.listGapAlerts()).toHaveLength(1));
    const [alert] = await fx.consumer.listGapAlerts();
    expect(alert).toMatchObject<Partial<GapAlert>>({
      source: "ledger/a",
      fromVersion: 2,
      toVersion: 2,
      status: "open",
    });
    await fx.host.stop();
  });

  it("stops watching on stop", async () => {
    const fx = hostWith();
    await fx.host.start();
    await fx.host.stop();
    // A gap left by an earlier process, seen by no check once the host has stopped.
    await fx.journal.commit({
      park: [{ consumer: "ticks", source: "ledger/b", version: 2, message: tick("ledger", "b", 2) }],
      now: fx.clock.now(),
    });
    fx.clock.advance(2 * GAP_TIMEOUT_MS);
    await settle();
    expect(await fx.consumer.listGapAlerts()).toEqual([]);
    expect(await fx.consumer.checkGaps()).toHaveLength(1); // it was there to be seen
  });

  it("stop waits for a gap check in progress, whose hook may still hand events to the consumer", async () => {
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    let hooked = false;
    const fx = hostWith({
      reconcile: async () => {
        hooked = true;
        await gate;
        return { action: "wait" };
      },
    });
    await fx.host.start();
    await openGap(fx);
    fx.clock.advance(GAP_TIMEOUT_MS);
    await vi.waitFor(() => expect(hooked).toBe(true));
    let stopped = false;
    const stopping = fx.host.stop().then(() => {
      stopped = true;
    });
    await settle();
    expect(stopped).toBe(false);
    open();
    await stopping;
    expect((await fx.consumer.listGapAlerts())[0]?.status).toBe("waiting");
  });

  it("does not watch when told not to, host-wide or per consumer; a consumer's own interval wins", async () => {
    for (const off of [{ host: false as const }, { consumer: false as const }]) {
      const fx = hostWith(off);
      await fx.host.start();
      await openGap(fx);
      fx.clock.advance(2 * GAP_TIMEOUT_MS);
      await settle();
      expect(await fx.consumer.listGapAlerts()).toEqual([]);
      expect(await fx.consumer.checkGaps()).toHaveLength(1); // the application's own call
      await fx.host.stop();
    }
    const fx = hostWith({ host: false, consumer: 1_000 });
    await fx.host.start();
    await openGap(fx);
    fx.clock.advance(GAP_TIMEOUT_MS);
    await vi.waitFor(async () => expect(await fx.consumer.listGapAlerts()).toHaveLength(1));
    await fx.host.stop();
  });

  it("refuses an interval that is not a positive number of ms, or one given to a facts consumer, naming it", () => {
    expect(() => hostWith({ host: 0 })).toThrow(/createHost gapCheckEveryMs must be a positive number of ms/);
    expect(() => hostWith({ consumer: -1 })).toThrow(/consumer "ticks" gapCheckEveryMs must be a positive/);
    const facts = () =>
      createHost({
        journal: memoryJournal(),
        actors: [],
        consumers: [
          {
            name: "paid",
            handler: paidView,
            subjects: ["oncely.>"],
            transport: new InProcessTransport(),
            gapCheckEveryMs: 1_000,
          },
        ],
      });
    expect(facts).toThrow(InvalidInputError);
    expect(facts).toThrow(/consumer "paid" is not sequenced: it has no gaps to check/);
  });
});
