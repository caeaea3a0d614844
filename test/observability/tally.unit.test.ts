import { Counter, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createHost, InProcessTransport } from "../../src/index.js";
import { Consumer } from "../../src/messaging/consumer.js";
import type { Envelope } from "../../src/messaging/envelope.js";
import { SeriesTally, Tally, valuesOf } from "../../src/observability/tally.js";
import { memoryJournal } from "../../src/testing/index.js";
import { checkout, paidView, paymentProvider } from "../host/fixtures/checkout.js";
import { orderEvents, orderFacts, orderTimeline } from "../messaging/support/orders.js";

/** The sum of a metric's series whose labels include `labels`. */
async function series(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name} in the registry`);
  const { values } = await metric.get();
  return values
    .filter((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value))
    .reduce((n, v) => n + v.value, 0);
}

/** A stat and the series it is read from: its metric, labels, and any more series added to it. */
type Source = [metric: string, labels?: Record<string, string>];

/**
 * Every count of `stats` against the series it stands for. A count missing from `sources` fails
 * (unless listed in `noSeries`), so a stat added without a metric is seen here.
 */
async function expectAgreement(
  registry: Registry,
  stats: object,
  sources: Record<string, Source[]>,
  noSeries: readonly string[] = [],
): Promise<void> {
  expect(Object.keys(stats).sort()).toEqual([...Object.keys(sources), ...noSeries].sort());
  const fromMetrics: Record<string, number> = {};
  for (const [stat, from] of Object.entries(sources)) {
    fromMetrics[stat] = 0;
    for (const [metric, labels] of from) fromMetrics[stat] += await series(registry, metric, labels);
  }
  const counted = Object.fromEntries(Object.keys(sources).map((k) => [k, (stats as Record<string, number>)[k]]));
  expect(counted).toEqual(fromMetrics);
}

/** Where each count of a consumer's `stats` is read from. */
function consumerSources(consumer: string): Record<string, Source[]> {
  const handled = (outcome: string): Source => ["oncely_consumer_messages_total", { consumer, outcome }];
  return {
    applied: [handled("applied")],
    duplicates: [handled("duplicate")],
    parked: [handled("parked")],
    released: [handled("released")],
    ignored: [handled("ignored")],
    backwards: [["oncely_fact_backwards_total", { consumer }]],
    deadLetters: [["oncely_dead_letters_total", { consumer }]],
    conflicts: [["oncely_consumer_conflicts_total", { consumer }]],
    handedOver: [["oncely_consumer_handed_over_total", { consumer }]],
    copiesSettled: [handled("copy")],
    handOverFailures: [handled("hand-over-failed")],
  };
}

describe("Tally", () => {
  it("moves its count and the series together, bound or labelled per call", async () => {
    const registry = new Registry();
    const labelled = new Counter({ name: "t_labelled", help: "t", labelNames: ["k"], registers: [registry] });
    const plain = new Counter({ name: "t_plain", help: "t", registers: [registry] });
    const a = new Tally();
    a.on(labelled.labels({ k: "x" }));
    a.onLabels(labelled, { k: "y" }, 3);
    const b = new SeriesTally(plain);
    b.inc();
    b.inc(2);
    expect(valuesOf({ a, b })).toEqual({ a: 4, b: 3 });
    expect((await labelled.get()).values.map((v) => v.value)).toEqual([1, 3]);
    expect((await plain.get()).values[0]?.value).toBe(3);
  });
});

describe("stats read from the tallies agree with the metrics", () => {
  it("a facts consumer: applied, duplicates, facts going backwards", async () => {
    const registry = new Registry();
    const consumer = new Consumer({ name: "facts", journal: memoryJournal(), handler: orderFacts, registry });
    const [placed, paid, ready, shipped] = orderEvents([4]) as [Envelope, Envelope, Envelope, Envelope];
    for (const e of [shipped, placed, ready, paid, paid]) await consumer.handle(e);
    expect(consumer.stats).toMatchObject({ applied: 4, duplicates: 1, backwards: 1 });
    await expectAgreement(registry, consumer.stats, consumerSources(consumer.name));
  });

  it("a sequenced consumer: versions parked, then released", async () => {
    const registry = new Registry();
    const journal = memoryJournal();
    const consumer = new Consumer({ name: "timeline", journal, handler: orderTimeline, mode: "sequenced", registry });
    const [v1, v2, v3] = orderEvents([3]) as [Envelope, Envelope, Envelope];
    for (const e of [v3, v2, v1, v2]) await consumer.handle(e);
    expect(consumer.stats).toMatchObject({ applied: 1, parked: 2, released: 2, duplicates: 1 });
    await expectAgreement(registry, consumer.stats, consumerSources(consumer.name));
  });

  it("runtime, dispatcher, relay, hand-over and consumer of a host, after work on the memory journal", async () => {
    const registry = new Registry();
    const provider = paymentProvider();
    const host = createHost({
      journal: memoryJournal(),
      actors: [checkout],
      handlers: [provider.handler],
      relay: { transport: new InProcessTransport() },
      consumers: [{ name: "paid-view", handler: paidView, subjects: ["oncely.>"] }],
      name: "shop-1",
      registry,
    });
    await host.start();
    for (const id of ["1", "2", "3", "4"]) {
      await host.send(`checkout/${id}`, { type: "Checkout", amount: id === "3" ? 50_000 : 100 }, { messageId: id });
    }
    await host.send("checkout/1", { type: "Checkout", amount: 100 }, { messageId: "1" }); // a duplicate
    await host.drain({ timeoutMs: 10_000 });

    const { runtime, dispatcher, relay } = host;
    const consumer = host.consumers[0] as Consumer;
    if (!relay) throw new Error("the host has a relay");
    // The work went through each path counted below, so agreement is not agreement at zero.
    expect(runtime.stats).toMatchObject({ duplicates: 1 });
    expect(runtime.stats.commands).toBe(9); // 5 sends, 4 effect outcomes
    expect(dispatcher.stats).toMatchObject({ completed: 3, failed: 1, runs: 4 });
    expect(relay.stats.published).toBe(3);
    expect(consumer.stats.applied).toBe(3);

    await expectAgreement(registry, runtime.stats, {
      commands: [["oncely_commands_total"]],
      duplicates: [["oncely_inbox_duplicates_total"]],
      conflicts: [["oncely_version_conflicts_total"]],
      recoveries: [["oncely_actor_recoveries_total"]],
      passivations: [["oncely_actor_passivations_total"]],
    });
    const outcome = (o: string): Source => ["oncely_effect_outcomes_total", { outcome: o }];
    const message = (o: string): Source => ["oncely_messages_total", { outcome: o }];
    await expectAgreement(
      registry,
      dispatcher.stats,
      {
        claimed: [["oncely_outbox_rows_taken_total"]],
        handedOver: [["oncely_outbox_rows_taken_total", { how: "hand-over" }]],
        runs: [["oncely_effect_attempts_total"]],
        lookups: [["oncely_effect_lookups_total"]],
        completed: [outcome("succeeded")],
        failed: [outcome("failed")],
        unknown: [outcome("unknown")],
        reconcile: [outcome("reconcile")],
        delivered: [message("delivered")],
        rejected: [message("rejected")],
        dead: [outcome("dead"), message("dead"), ["oncely_timer_dead_total"]],
        leaseLost: [["oncely_outbox_lease_lost_total"]],
      },
      ["retried"], // in part not-performed retries, which have no series of their own (see DispatcherCounts)
    );
    await expectAgreement(registry, relay.stats, {
      published: [["oncely_relay_published_total", { relay: relay.owner }]],
      failures: [["oncely_relay_publish_failures_total", { relay: relay.owner }]],
      invalid: [["oncely_relay_invalid_total", { relay: relay.owner }]],
    });
    expect(relay.handOverStats.handedOver).toBeGreaterThan(0);
    await expectAgreement(
      registry,
      relay.handOverStats,
      {
        handedOver: [["oncely_relay_handed_over_total", { relay: relay.owner }]],
        released: [["oncely_relay_hand_over_released_total", { relay: relay.owner }]],
      },
      // Test aids: each consumer counts what became of a handed-over event; `appended` is a part of `handedOver`.
      ["delivered", "appended"],
    );
    await expectAgreement(registry, consumer.stats, consumerSources(consumer.name));
    await host.stop();
  });
});
