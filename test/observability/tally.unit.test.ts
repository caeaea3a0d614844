import { Counter, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { memoryJournal } from "../../src/journal/memory.js";
import { Consumer } from "../../src/messaging/consumer.js";
import { tally } from "../../src/observability/tally.js";
import { orderEvent, orderFacts } from "../messaging/support/orders.js";

describe("tally", () => {
  it("adds to the stat and to the counter's series in one call, with and without labels", async () => {
    const registry = new Registry();
    const labelled = new Counter({ name: "t_labelled", help: "t", labelNames: ["k"], registers: [registry] });
    const plain = new Counter({ name: "t_plain", help: "t", registers: [registry] });
    const stats = { a: 0, b: 0 };
    tally(stats, "a", labelled, { k: "x" });
    tally(stats, "a", labelled, { k: "y" }, 3);
    tally(stats, "b", plain);
    tally(stats, "b", plain, 2);
    expect(stats).toEqual({ a: 4, b: 3 });
    expect((await labelled.get()).values.map((v) => v.value)).toEqual([1, 3]);
    expect((await plain.get()).values[0]?.value).toBe(3);
  });

  it("a consumer's stats and its handled series say the same", async () => {
    const registry = new Registry();
    const consumer = new Consumer({ name: "facts", journal: memoryJournal(), handler: orderFacts, registry });
    const paid = orderEvent("o1", 2);
    await consumer.handle(paid);
    await consumer.handle(paid);
    await consumer.handle(orderEvent("o2", 1));
    const handled = await registry.getSingleMetric("oncely_consumer_messages_total")?.get();
    const series = (outcome: string) => handled?.values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
    expect(consumer.stats.applied).toBe(2);
    expect(series("applied")).toBe(consumer.stats.applied);
    expect(consumer.stats.duplicates).toBe(1);
    expect(series("duplicate")).toBe(consumer.stats.duplicates);
  });
});
