import { expect, it } from "vitest";
import { sequentialIds } from "../../../src/core/clock.js";
import type { HandOver } from "../../../src/core/hand-over.js";
import { createRuntime } from "../../../src/core/runtime.js";
import type { Journal } from "../../../src/journal/types.js";
import { Consumer } from "../../../src/messaging/consumer.js";
import { decodeEnvelope } from "../../../src/messaging/envelope.js";
import { messagingMetrics } from "../../../src/messaging/metrics.js";
import { Relay } from "../../../src/messaging/relay.js";
import { JournalTransport, publishedEntry } from "../../../src/messaging/transports/journal.js";
import { SimulatedClock } from "../../../src/testing/clock.js";
import { orderTimeline, perEventCount, producer } from "./orders.js";

/** The journal, counting the event rows a relay claims and the lease-held outbox updates (marks). */
function counting(journal: Journal) {
  const counts = { eventRowsClaimed: 0, outboxUpdates: 0, appends: 0 };
  const wrapped = new Proxy(journal, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property === "claimOutbox") {
        return async (options: Parameters<Journal["claimOutbox"]>[0]) => {
          const rows = await target.claimOutbox(options);
          counts.eventRowsClaimed += rows.filter((row) => row.category === "event").length;
          return rows;
        };
      }
      if (property === "updateOutbox") {
        return (...args: Parameters<Journal["updateOutbox"]>) => {
          counts.outboxUpdates++;
          return target.updateOutbox(...args);
        };
      }
      if (property === "appendPublished") {
        return (...args: Parameters<Journal["appendPublished"]>) => {
          counts.appends++;
          return target.appendPublished(...args);
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

/** A journal for one test, and how to let it go. */
export interface AtCommitWorld {
  journal: Journal;
  close(): Promise<void>;
}

/**
 * Events published by their own commit (`Relay.handOverTo` with `atCommit`), on a journal back end:
 * no outbox row, no claim, no publish, no mark; the log in commit order; local consumers handed
 * over at commit; and a process that dies between its commit and its hand-over still delivers
 * through the log's readers.
 */
export function publishAtCommitSuite(open: () => Promise<AtCommitWorld>): void {
  let n = 0;
  async function parts(world: AtCommitWorld) {
    const { journal, counts } = counting(world.journal);
    const prefix = `atc${++n}`;
    const clock = new SimulatedClock();
    const transport = new JournalTransport({ journal, pollMs: 20 });
    const runtime = createRuntime({ journal, actors: [producer], clock, ids: sequentialIds(`e${n}-`) });
    const relay = new Relay({ journal, transport, clock, subjectPrefix: prefix, metrics: messagingMetrics() });
    const common = { journal, clock, metrics: messagingMetrics() };
    const counter = new Consumer({ ...common, name: `count-${prefix}`, handler: perEventCount });
    const timeline = new Consumer({ ...common, name: `timeline-${prefix}`, handler: orderTimeline, mode: "sequenced" });
    const subjects = [`${prefix}.>`];
    const stop = async () => {
      await relay.stop();
      runtime.close();
      await transport.close();
      await world.close();
    };
    return { journal, counts, clock, transport, runtime, relay, counter, timeline, subjects, prefix, stop };
  }

  const countsOf = async (journal: Journal): Promise<number[]> =>
    (await journal.listDocuments(perEventCount.collection)).map((d) => (d.doc as { count: number }).count);
  const timelineOf = async (journal: Journal, id: string): Promise<string[]> =>
    ((await journal.getDocument(orderTimeline.collection, id))?.doc as { timeline: string[] } | undefined)?.timeline ??
    [];

  it("appends each event in its commit: no outbox row, claim, publish or mark; the log in commit order; consumers handed over", async () => {
    const p = await parts(await open());
    try {
      for (const consumer of [p.counter, p.timeline]) await consumer.subscribe(p.transport, { subjects: p.subjects });
      p.relay.handOverTo(
        p.runtime,
        [
          { consumer: p.counter, subjects: p.subjects },
          { consumer: p.timeline, subjects: p.subjects },
        ],
        { atCommit: true },
      );
      p.relay.start();
      for (let v = 1; v <= 3; v++) {
        for (const id of ["a", "b"]) await p.runtime.send(`producer/${id}`, { type: "Record", event: `E${v}` });
      }
      await until(
        () => p.counter.stats.copiesSettled === 6 && p.timeline.stats.copiesSettled === 6,
        "every log copy settled from memory",
      );
      expect(await p.journal.listOutbox({ category: "event" })).toEqual([]);
      expect(p.counts).toEqual({ eventRowsClaimed: 0, outboxUpdates: 0, appends: 0 });
      const log = await p.journal.readPublished(0);
      const order = log.map((entry) => decodeEnvelope(entry.body)).map((e) => `${e.aggregateId}:${e.type}`);
      expect(order).toEqual(["a:E1", "b:E1", "a:E2", "b:E2", "a:E3", "b:E3"]);
      expect(log.every((entry) => entry.subject.startsWith(`${p.prefix}.orders.`))).toBe(true);
      expect(p.relay.stats.published).toBe(6);
      expect(p.relay.handOverStats).toMatchObject({ handedOver: 6, appended: 6, delivered: 12 });
      expect(await countsOf(p.journal)).toEqual([1, 1, 1, 1, 1, 1]);
      expect(await timelineOf(p.journal, "a")).toEqual(["1:E1", "2:E2", "3:E3"]);
      expect(p.counter.stats).toMatchObject({ applied: 6, duplicates: 0, handedOver: 6 });
      expect(p.timeline.stats).toMatchObject({ applied: 6, parked: 0, handedOver: 6 });
    } finally {
      await p.stop();
    }
  });

  it("delivers an event whose process died between its commit and its hand-over through the log, once, in the stream's order", async () => {
    const p = await parts(await open());
    try {
      for (const consumer of [p.counter, p.timeline]) await consumer.subscribe(p.transport, { subjects: p.subjects });
      p.relay.handOverTo(
        p.runtime,
        [
          { consumer: p.counter, subjects: p.subjects },
          { consumer: p.timeline, subjects: p.subjects },
        ],
        { atCommit: true },
      );
      p.relay.start();
      // The dead process: its commit appended the event, and it died before handing it over.
      const dead = createRuntime({ journal: p.journal, actors: [producer], clock: p.clock, ids: sequentialIds("d") });
      const diedBeforeHandOver: HandOver = {
        lease: () => undefined,
        take: () => {},
        publish: (row) => {
          const prepared = p.relay.prepare(row);
          if (prepared.kind !== "ready") return undefined;
          const entry = publishedEntry(prepared.signed, p.relay.subjectOf(prepared.envelope));
          return { entry, committed: () => {}, failed: () => {} };
        },
      };
      dead.handOver(diedBeforeHandOver, true);
      await dead.send("producer/s", { type: "Record", event: "E1" });
      dead.close();
      await p.runtime.send("producer/s", { type: "Record", event: "E2" });
      await p.runtime.send("producer/s", { type: "Record", event: "E3" });
      await until(async () => (await timelineOf(p.journal, "s")).length === 3, "the timeline complete");
      await until(async () => (await countsOf(p.journal)).length === 3, "three events counted");
      await p.transport.idle();
      expect(await timelineOf(p.journal, "s")).toEqual(["1:E1", "2:E2", "3:E3"]);
      expect(await countsOf(p.journal)).toEqual([1, 1, 1]);
      // E1 by the log's reader (the full path), E2 and E3 at commit; nothing claimed or marked.
      expect(p.counter.stats).toMatchObject({ applied: 3, handedOver: 2, duplicates: 0 });
      expect(await p.journal.listOutbox({ category: "event" })).toEqual([]);
      expect(p.counts.eventRowsClaimed).toBe(0);
      expect(p.relay.stats.published).toBe(2);
    } finally {
      await p.stop();
    }
  });

  it("leaves events to the outbox and the claim while the relay is stopped", async () => {
    const p = await parts(await open());
    try {
      await p.counter.subscribe(p.transport, { subjects: p.subjects });
      p.relay.handOverTo(p.runtime, [{ consumer: p.counter, subjects: p.subjects }], { atCommit: true });
      // Not started: the commit inserts the row, and the relay claims it once it runs.
      await p.runtime.send("producer/x", { type: "Record", event: "E1" });
      expect(await p.journal.listOutbox({ category: "event", status: "pending" })).toHaveLength(1);
      expect(await p.journal.readPublished(0)).toEqual([]);
      expect(await p.relay.drain()).toBe(1);
      expect(p.counts.eventRowsClaimed).toBe(1);
      expect((await p.journal.listOutbox({ category: "event" }))[0]).toMatchObject({
        status: "done",
        outcome: "published",
      });
      await until(async () => (await countsOf(p.journal)).length === 1, "the claimed event counted");
      expect(p.counter.stats).toMatchObject({ applied: 1, handedOver: 0 });
    } finally {
      await p.stop();
    }
  });
}
