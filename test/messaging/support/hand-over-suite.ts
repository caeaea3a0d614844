import { expect, it } from "vitest";
import { sequentialIds } from "../../../src/core/clock.js";
import type { HandOver } from "../../../src/core/hand-over.js";
import { createRuntime } from "../../../src/core/runtime.js";
import type { Journal } from "../../../src/journal/types.js";
import { Consumer } from "../../../src/messaging/consumer.js";
import { messagingMetrics } from "../../../src/messaging/metrics.js";
import { Relay } from "../../../src/messaging/relay.js";
import type { Transport } from "../../../src/messaging/transport.js";
import { SimulatedClock } from "../../../src/testing/clock.js";
import { orderTimeline, perEventCount, producer } from "./orders.js";

/** A transport for one test, with the subject prefix it carries and a way to wait for its consumers. */
export interface HandOverWorld {
  journal: Journal;
  transport: Transport;
  prefix: string;
  close(): Promise<void>;
}

/** The journal, counting the claims of event rows and the inbox reads per consumer. */
function counting(journal: Journal) {
  const counts = { eventClaims: 0, inboxReads: new Map<string, number>() };
  const wrapped = new Proxy(journal, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property === "claimOutbox") {
        return (options: Parameters<Journal["claimOutbox"]>[0]) => {
          if (options.categories?.includes("event")) counts.eventClaims++;
          return target.claimOutbox(options);
        };
      }
      if (property === "getInbox") {
        return (consumer: string, messageId: string) => {
          counts.inboxReads.set(consumer, (counts.inboxReads.get(consumer) ?? 0) + 1);
          return target.getInbox(consumer, messageId);
        };
      }
      return value.bind(target);
    },
  });
  return { journal: wrapped, counts };
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Events handed over at commit, on any durable transport: local consumers get them with no relay
 * claim, the durable copy is settled once, and a crash between commit and hand-over is covered
 * by the claim path.
 */
export function handOverSuite(open: () => Promise<HandOverWorld>): void {
  function parts(world: HandOverWorld) {
    const { journal, counts } = counting(world.journal);
    const clock = new SimulatedClock();
    const runtime = createRuntime({ journal, actors: [producer], clock, ids: sequentialIds("e") });
    const relay = new Relay({
      journal,
      transport: world.transport,
      clock,
      subjectPrefix: world.prefix,
      leaseMs: 5000,
      metrics: messagingMetrics(),
    });
    const common = { journal, clock, metrics: messagingMetrics() };
    const counter = new Consumer({ ...common, name: `count-${world.prefix}`, handler: perEventCount });
    const timeline = new Consumer({
      ...common,
      name: `timeline-${world.prefix}`,
      handler: orderTimeline,
      mode: "sequenced",
    });
    const subjects = [`${world.prefix}.>`];
    return { journal, counts, clock, runtime, relay, counter, timeline, subjects };
  }

  async function counts(journal: Journal): Promise<number[]> {
    const docs = await journal.listDocuments(perEventCount.collection);
    return docs.map((d) => (d.doc as { count: number }).count);
  }

  async function timelineOf(journal: Journal, id: string): Promise<string[]> {
    return (
      ((await journal.getDocument(orderTimeline.collection, id))?.doc as { timeline: string[] } | undefined)
        ?.timeline ?? []
    );
  }

  it("gives local consumers their events at commit, with no relay claim after it, and settles each durable copy from memory once", async () => {
    const world = await open();
    const p = parts(world);
    try {
      for (const consumer of [p.counter, p.timeline])
        await consumer.subscribe(world.transport, { subjects: p.subjects });
      p.relay.handOverTo(p.runtime, [
        { consumer: p.counter, subjects: p.subjects },
        { consumer: p.timeline, subjects: p.subjects },
      ]);
      p.relay.start();
      // The start's own claim round; the simulated clock never moves, so no poll follows it.
      await until(() => p.counts.eventClaims >= 1, "the relay's first round");
      const claimsBefore = p.counts.eventClaims;
      for (let v = 1; v <= 3; v++) {
        for (const id of ["a", "b"]) await p.runtime.send(`producer/${id}`, { type: "Record", event: `E${v}` });
      }
      await until(async () => (await counts(p.journal)).length === 6, "six events counted");
      await until(
        () => p.counter.stats.copiesSettled === 6 && p.timeline.stats.copiesSettled === 6,
        "every durable copy settled",
      );
      expect(p.counts.eventClaims).toBe(claimsBefore);
      expect(p.relay.handOverStats.handedOver).toBe(6);
      expect(p.relay.stats.published).toBe(6);
      expect(await counts(p.journal)).toEqual([1, 1, 1, 1, 1, 1]);
      expect(await timelineOf(p.journal, "a")).toEqual(["1:E1", "2:E2", "3:E3"]);
      // Handled once each, by the hand-over; the copies cost the facts consumer no inbox read.
      expect(p.counter.stats).toMatchObject({ applied: 6, duplicates: 0, handedOver: 6 });
      expect(p.timeline.stats).toMatchObject({ applied: 6, duplicates: 0, parked: 0, handedOver: 6 });
      expect(p.counts.inboxReads.get(p.counter.name) ?? 0).toBe(0);
      expect((await p.journal.listOutbox({ category: "event", status: "pending" })).length).toBe(0);
    } finally {
      await p.relay.stop();
      p.runtime.close();
      await world.close();
    }
  });

  it("delivers an event committed by a process that died before its hand-over through the durable path, once, and keeps the stream's order", async () => {
    const world = await open();
    const p = parts(world);
    try {
      for (const consumer of [p.counter, p.timeline])
        await consumer.subscribe(world.transport, { subjects: p.subjects });
      p.relay.handOverTo(p.runtime, [
        { consumer: p.counter, subjects: p.subjects },
        { consumer: p.timeline, subjects: p.subjects },
      ]);
      p.relay.start();
      // The dead process: its relay leased the row at commit, and it died before taking it.
      const dead = createRuntime({ journal: p.journal, actors: [producer], clock: p.clock, ids: sequentialIds("d") });
      const diedBeforeHandOver: HandOver = {
        lease: (row, now) => (row.category === "event" ? { owner: "dead-relay#h1", until: now + 5000 } : undefined),
        take: () => {},
      };
      dead.handOver(diedBeforeHandOver, true);
      await dead.send("producer/s", { type: "Record", event: "E1" });
      dead.close();
      // This process goes on with the stream: versions 2 and 3 are handed over ahead of version 1.
      await p.runtime.send("producer/s", { type: "Record", event: "E2" });
      await p.runtime.send("producer/s", { type: "Record", event: "E3" });
      await until(() => p.timeline.stats.parked >= 2, "versions 2 and 3 parked behind version 1");
      expect(await timelineOf(p.journal, "s")).toEqual([]);
      // Still leased to the dead relay: no claim takes it before its lease runs out.
      expect(await p.relay.runOnce()).toBe(0);
      p.clock.advance(5001);
      expect(await p.relay.drain()).toBe(1);
      await until(async () => (await timelineOf(p.journal, "s")).length === 3, "the timeline complete");
      await until(async () => (await counts(p.journal)).length === 3, "three events counted");
      expect(await timelineOf(p.journal, "s")).toEqual(["1:E1", "2:E2", "3:E3"]);
      expect(await counts(p.journal)).toEqual([1, 1, 1]);
      expect(p.relay.stats.published).toBe(3);
    } finally {
      await p.relay.stop();
      p.runtime.close();
      await world.close();
    }
  });

  it("without a hand-over, nothing reaches a consumer until the relay claims it", async () => {
    const world = await open();
    const p = parts(world);
    try {
      await p.counter.subscribe(world.transport, { subjects: p.subjects });
      await p.runtime.send("producer/x", { type: "Record", event: "E1" });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await counts(p.journal)).toEqual([]);
      expect(await p.relay.drain()).toBe(1);
      await until(async () => (await counts(p.journal)).length === 1, "the claimed event counted");
      expect(p.counter.stats).toMatchObject({ applied: 1, handedOver: 0, copiesSettled: 0 });
    } finally {
      await p.relay.stop();
      p.runtime.close();
      await world.close();
    }
  });
}
