import type { NatsConnection } from "@nats-io/transport-node";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/core/logger.js";
import { sliceOf } from "../../src/core/slices.js";
import { parseEnvelope } from "../../src/messaging/envelope.js";
import { subjectFor } from "../../src/messaging/subjects.js";
import type { Delivery, DeliveryOutcome } from "../../src/messaging/transport.js";
import { connectNats } from "../../src/nats/connection.js";
import { NatsTransport } from "../../src/nats/transport.js";
import { orderEvent } from "../messaging/support/orders.js";
import { MovableOwnership } from "../support/movable-ownership.js";
import { NATS_URL, probeNats } from "../support/services.js";
import { waitFor } from "./support/nats.js";

const nats = await probeNats();
const SLICES = 8;
const ORDERS = Array.from({ length: 16 }, (_, i) => `n${i}`);

describe.skipIf(!nats.available)(`integration events partitioned by slice on NATS ${nats.reason}`, () => {
  const unique = `parts_${process.pid}_${Date.now().toString(36)}`;
  const stream = `T_${unique}`.toUpperCase();
  const prefix = `t_${unique}`;
  const connections: NatsConnection[] = [];
  const transports: NatsTransport[] = [];
  const open = async () => {
    const connection = await connectNats(NATS_URL);
    connections.push(connection);
    const transport = await NatsTransport.create({
      connection,
      stream,
      subjects: [`${prefix}.>`],
      storage: "memory",
      ackWaitMs: 1000,
      retryBaseMs: 20,
      retryMaxMs: 100,
      partitions: { sliceCount: SLICES, subjectPrefix: prefix },
      logger: silentLogger,
    });
    transports.push(transport);
    return transport;
  };
  beforeAll(async () => {
    await open();
  });
  afterAll(async () => {
    for (const t of transports) await t.close().catch(() => {});
    await transports[0]?.manager.streams.delete(stream).catch(() => {});
    for (const c of connections) await c.close().catch(() => {});
  });

  const publishRound = async (transport: NatsTransport, source: string, version: number) => {
    for (const order of ORDERS) {
      const event = { ...orderEvent(order, version), source };
      await transport.publish(event, subjectFor(prefix, event));
    }
  };
  function recorder() {
    const seen: { order: string; version: number; subject: string }[] = [];
    const handler = async (d: Delivery): Promise<DeliveryOutcome> => {
      const envelope = parseEnvelope(JSON.parse(d.body));
      seen.push({ order: envelope.aggregateId, version: envelope.aggregateVersion ?? 0, subject: d.subject });
      return { kind: "ack" };
    };
    const versions = (order: string) => seen.filter((s) => s.order === order).map((s) => s.version);
    return { seen, handler, versions };
  }
  const all = Array.from({ length: SLICES }, (_, i) => i);

  it("publishes with the slice token and gives each of two workers exactly its slices' events, once, in order", async () => {
    const [ta, tb] = [await open(), await open()];
    const even = new MovableOwnership(
      SLICES,
      all.filter((s) => s % 2 === 0),
    );
    const odd = new MovableOwnership(
      SLICES,
      all.filter((s) => s % 2 === 1),
    );
    const [a, b] = [recorder(), recorder()];
    const subjects = [`${prefix}.disjoint.*`];
    const sa = await ta.subscribe("disjoint", { subjects, ownership: even, concurrency: 1 }, a.handler);
    const sb = await tb.subscribe("disjoint", { subjects, ownership: odd, concurrency: 1 }, b.handler);
    for (let v = 1; v <= 3; v++) await publishRound(ta, "disjoint", v);
    await waitFor(() => a.seen.length + b.seen.length >= ORDERS.length * 3, "every event handled");
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(a.seen.length + b.seen.length).toBe(ORDERS.length * 3);
    for (const order of ORDERS) {
      const [mine, other] = sliceOf(order, SLICES) % 2 === 0 ? [a, b] : [b, a];
      expect(mine.versions(order), order).toEqual([1, 2, 3]);
      expect(other.versions(order), order).toEqual([]);
    }
    // Subscribers see the subject the relay published on; the broker stored it with the slice.
    expect(a.seen[0]?.subject).toMatch(new RegExp(`^${prefix}\\.disjoint\\.[A-Za-z]+$`));
    const info = await ta.manager.consumers.info(stream, "disjoint-s0");
    expect(info.config.filter_subject).toBe(`${prefix}.disjoint.*.s0`);
    await sa.stop();
    await sb.stop();
  });

  it("a slice moving mid-stream loses nothing: the new owner's durable resumes at the ack floor", async () => {
    const [ta, tb] = [await open(), await open()];
    const first = new MovableOwnership(SLICES, all);
    const second = new MovableOwnership(SLICES, []);
    const moving = [...new Set(ORDERS.slice(0, 4).map((o) => sliceOf(o, SLICES)))];
    const [a, b] = [recorder(), recorder()];
    const subjects = [`${prefix}.moving.*`];
    const sa = await ta.subscribe("moving", { subjects, ownership: first, concurrency: 2 }, a.handler);
    const sb = await tb.subscribe("moving", { subjects, ownership: second, concurrency: 2 }, b.handler);
    await publishRound(ta, "moving", 1);
    await publishRound(ta, "moving", 2);
    await waitFor(() => a.seen.length >= ORDERS.length * 2, "the first owner handled rounds 1 and 2");
    await first.release(moving);
    second.gain(moving);
    await publishRound(ta, "moving", 3);
    await waitFor(() => a.seen.length + b.seen.length >= ORDERS.length * 3, "round 3 handled");
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const order of ORDERS) {
      if (moving.includes(sliceOf(order, SLICES))) {
        expect(a.versions(order), order).toEqual([1, 2]);
        expect(b.versions(order), order).toEqual([3]);
      } else {
        expect(a.versions(order), order).toEqual([1, 2, 3]);
        expect(b.versions(order), order).toEqual([]);
      }
    }
    expect(await sb.pending()).toBe(0);
    await sa.stop();
    await sb.stop();
  });

  it("without an ownership, one durable reads every slice", async () => {
    const t = await open();
    const r = recorder();
    const s = await t.subscribe("whole", { subjects: [`${prefix}.whole.>`] }, r.handler);
    await publishRound(t, "whole", 1);
    await waitFor(() => r.seen.length >= ORDERS.length, "every event handled");
    expect(new Set(r.seen.map((x) => x.order)).size).toBe(ORDERS.length);
    expect((await t.manager.consumers.info(stream, "whole")).config.filter_subject).toBe(`${prefix}.whole.*.*`);
    await s.stop();
  });

  it("counts and warns about messages published without a slice token, which no partitioned durable reads", async () => {
    const connection = await connectNats(NATS_URL);
    connections.push(connection);
    const warnings: { obj: Record<string, unknown>; msg: string }[] = [];
    const registry = new Registry();
    const t = await NatsTransport.create({
      connection,
      stream,
      subjects: [`${prefix}.>`],
      storage: "memory",
      partitions: { sliceCount: SLICES, subjectPrefix: prefix },
      registry,
      logger: { ...silentLogger, warn: (obj: Record<string, unknown>, msg: string) => warnings.push({ obj, msg }) },
    });
    transports.push(t);
    // An old release's relay: the logical subject, no slice token.
    const stray = { ...orderEvent("stray", 1), source: "strays" };
    await t.publishRaw(subjectFor(prefix, stray), JSON.stringify(stray), "stray-1");
    await t.publish(
      { ...orderEvent("kept", 1), source: "strays" },
      subjectFor(prefix, { source: "strays", type: "OrderPlaced" }),
    );
    const r = recorder();
    const s = await t.subscribe("strays", { subjects: [`${prefix}.strays.*`] }, r.handler);
    await waitFor(async () => r.seen.length === 1, "the partitioned event");
    expect(r.seen[0]?.order).toBe("kept");
    const warned = warnings.find((w) => w.msg.includes("without a slice token"));
    expect(warned?.obj).toMatchObject({ consumer: "strays", messages: 1, subjects: [`${prefix}.strays.OrderPlaced`] });
    expect(await registry.getSingleMetricAsString("oncely_nats_unpartitioned_messages")).toContain(
      'oncely_nats_unpartitioned_messages{consumer="strays"} 1',
    );
    await s.stop();
  });
});
