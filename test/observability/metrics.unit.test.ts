import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { Consumer } from "../../src/messaging/consumer.js";
import { messagingMetrics } from "../../src/messaging/metrics.js";
import { defineProjection } from "../../src/messaging/projection.js";
import { observeJournal } from "../../src/observability/journal-metrics.js";
import { twoContexts } from "./two-contexts.js";

/** The value of one series (labels matched exactly on the names given), or undefined when absent. */
async function series(registry: Registry, name: string, labels: Record<string, string> = {}) {
  // A histogram's _count and _sum series are values of the histogram itself.
  const base = name.replace(/_(count|sum)$/, "");
  const metric = registry.getSingleMetric(name) ?? registry.getSingleMetric(base);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const found = values.filter(
    (v) =>
      ((v as { metricName?: string }).metricName ?? name) === name &&
      Object.entries(labels).every(([k, want]) => (v.labels as Record<string, unknown>)[k] === want),
  );
  return found.length === 0 ? undefined : found.reduce((sum, v) => sum + v.value, 0);
}

describe("metrics", () => {
  it("count commands, commits, attempts, outcomes and lags on the hot path, in the registry given", async () => {
    const registry = new Registry();
    const world = twoContexts({ registry });
    const sub = await world.consumer.subscribe(world.transport, { subjects: ["shop.>"] });
    await world.orders.send("order/o1", { type: "PlaceOrder", amount: 5 }, { messageId: "m1" });
    await world.orders.send("order/o1", { type: "PlaceOrder", amount: 5 }, { messageId: "m1" });
    while ((await world.dispatcher.runOnce()) > 0) {}
    world.clock.advance(1500);
    await world.relay.drain();
    await world.transport.idle();
    await sub.stop();

    expect(await series(registry, "oncely_commands_total", { actor: "order" })).toBe(3);
    expect(await series(registry, "oncely_inbox_duplicates_total", { actor: "order" })).toBe(1);
    // Placed, its duplicate (refused by the inbox row, which takes a commit to learn), the charge's outcome.
    expect(await series(registry, "oncely_commit_duration_seconds_count", { actor: "order" })).toBe(3);
    expect(await series(registry, "oncely_commit_duration_seconds_count", { actor: "shipment" })).toBe(1);
    expect(await series(registry, "oncely_effect_attempts_total", { kind: "charge" })).toBe(1);
    expect(await series(registry, "oncely_outbox_rows_taken_total", { category: "effect", how: "claim" })).toBe(1);
    // Loaded once, and again after the duplicate's refused commit dropped the cached actor.
    expect(await series(registry, "oncely_actor_recoveries_total", { actor: "order" })).toBe(2);
    expect(await series(registry, "oncely_effect_outcomes_total", { kind: "charge", outcome: "succeeded" })).toBe(1);
    expect(
      await series(registry, "oncely_effect_handler_duration_seconds_count", { kind: "charge", call: "run" }),
    ).toBe(1);
    // The event waited 1.5 s on the simulated clock between its commit and its publication.
    expect(await series(registry, "oncely_relay_lag_seconds_sum")).toBe(1.5);
    expect(await series(registry, "oncely_consumer_lag_seconds_count", { consumer: "shipping" })).toBe(1);
    // Nothing of this went to prom-client's global registry.
    expect((await import("prom-client")).register.getSingleMetric("oncely_commands_total")).toBeUndefined();
  });

  it("read what waits in the journal at each scrape: effects by kind and status, oldest ages, reconciliation, relay backlog, parked, dead letters", async () => {
    const registry = new Registry();
    const world = twoContexts({
      registry,
      // Ambiguous, no lookup, provider does not dedup: straight to the reconciliation queue.
      charge: { kind: "charge", run: async () => Promise.reject(new Error("connection reset")) },
    });
    observeJournal({ journal: world.ordering, registry, clock: world.clock });
    await world.orders.send("order/o1", { type: "PlaceOrder", amount: 5 });
    while ((await world.dispatcher.runOnce()) > 0) {}
    world.clock.advance(10_000);
    await world.orders.send("order/o2", { type: "PlaceOrder", amount: 5 });
    world.clock.advance(4_000);

    const timeline = new Consumer({
      name: "timeline",
      journal: world.ordering,
      clock: world.clock,
      mode: "sequenced",
      metrics: messagingMetrics(registry),
      handler: defineProjection({ collection: "t", key: (e) => e.aggregateId, project: () => ({}) }),
    });
    const envelope = (v: number) => ({
      eventId: `p:${v}`,
      type: "Paid",
      source: "payment",
      aggregateId: "o9",
      aggregateVersion: v,
      occurredAt: new Date(world.clock.now()).toISOString(),
      correlationId: "o9",
      causationId: `p:${v}`,
      payload: {},
    });
    await timeline.handle(envelope(3));
    await timeline.handle(envelope(4));
    world.clock.advance(2_000);
    await timeline.deliver({ subject: "shop.x", body: "not json", messageId: undefined, attempt: 1, maxDeliveries: 5 });

    expect(await series(registry, "oncely_effects", { kind: "charge", status: "reconcile" })).toBe(1);
    expect(await series(registry, "oncely_effects", { kind: "charge", status: "pending" })).toBe(1);
    expect(await series(registry, "oncely_effect_oldest_age_seconds", { kind: "charge", state: "pending" })).toBe(6);
    expect(await series(registry, "oncely_effect_oldest_age_seconds", { kind: "charge", state: "unknown" })).toBe(16);
    expect(await series(registry, "oncely_reconciliation_queue")).toBe(1);
    expect(await series(registry, "oncely_effect_outcomes_total", { kind: "charge", outcome: "reconcile" })).toBe(1);
    expect(await series(registry, "oncely_parked", { consumer: "timeline" })).toBe(2);
    expect(await series(registry, "oncely_gap_oldest_age_seconds", { consumer: "timeline" })).toBe(2);
    expect(await series(registry, "oncely_dead_letters_open", { consumer: "timeline" })).toBe(1);
    expect(await series(registry, "oncely_relay_backlog")).toBeUndefined();

    // Settled and published: the gauges follow the journal at the next scrape.
    const row = await world.ordering.getOutbox("order:o1:charge");
    expect(row?.status).toBe("reconcile");
    await world.ordering.forceOutbox("order:o1:charge", { status: "done", outcome: "settled" }, world.clock.now());
    expect(await series(registry, "oncely_reconciliation_queue")).toBe(0);
    expect(await series(registry, "oncely_effects", { status: "reconcile" })).toBeUndefined();
    const text = await registry.metrics();
    expect(text).toContain('oncely_effects{kind="charge",status="pending"} 1');
  });
});
