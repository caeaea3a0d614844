import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defineActor } from "../src/core/actor.js";
import { sequentialIds } from "../src/core/clock.js";
import { createRuntime } from "../src/core/runtime.js";
import { memoryJournal } from "../src/journal/memory.js";
import type { Journal } from "../src/journal/types.js";
import { Consumer } from "../src/messaging/consumer.js";
import { messagingMetrics } from "../src/messaging/metrics.js";
import { defineProjection } from "../src/messaging/projection.js";
import { Relay } from "../src/messaging/relay.js";
import type { Transport } from "../src/messaging/transport.js";
import { InProcessTransport } from "../src/messaging/transports/in-process.js";
import { connectNats } from "../src/nats/connection.js";
import { NatsTransport } from "../src/nats/transport.js";

/**
 * Integration events relayed and consumed per second: N events are committed first (by actors
 * that publish), then the clock runs from starting the relay and a projection consumer until the
 * consumer has applied all N. Once through the in-process transport, once through NATS JetStream
 * (skipped when no server answers at ONCELY_TEST_NATS_URL / nats://127.0.0.1:4222).
 */

const STREAMS = 50;
const PER_STREAM = Number(process.env.ONCELY_BENCH_EVENTS_PER_STREAM ?? 40);

const emitter = defineActor<null, { type: "Emit"; n: number }, { type: "Emitted"; n: number }>({
  type: "emitter",
  initialState: () => null,
  evolve: (s) => s,
  decide: (c, _s, ctx) =>
    c.type !== "Emit"
      ? {}
      : {
          events: [{ type: "Emitted", n: c.n }],
          publish: [
            {
              eventId: `${ctx.id}:${c.n}`,
              type: "Emitted",
              source: "bench",
              aggregateId: ctx.id,
              aggregateVersion: ctx.version + 1,
              payload: { n: c.n },
            },
          ],
        },
});

const counter = defineProjection<{ n: number }>({
  collection: "bench-counter",
  key: (e) => e.aggregateId,
  project: (doc) => ({ n: (doc?.n ?? 0) + 1 }),
});

async function openJournal(dir: string): Promise<{ journal: Journal; label: string }> {
  try {
    const { sqliteJournal } = await import("../src/sqlite/index.js");
    const journal = sqliteJournal({ path: join(dir, "bench.db"), synchronous: "NORMAL" });
    await journal.migrate();
    return { journal, label: "sqlite (WAL, synchronous=NORMAL)" };
  } catch (error) {
    return { journal: memoryJournal(), label: `memory (sqlite unavailable: ${(error as Error).message})` };
  }
}

async function run(print: (line: string) => void, name: string, transport: Transport, prefix: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "oncely-bench-"));
  const { journal, label } = await openJournal(dir);
  try {
    const runtime = createRuntime({ journal, actors: [emitter], ids: sequentialIds("e") });
    const total = STREAMS * PER_STREAM;
    for (let n = 1; n <= PER_STREAM; n++) {
      await Promise.all(Array.from({ length: STREAMS }, (_, s) => runtime.send(`emitter/s${s}`, { type: "Emit", n })));
    }
    const metrics = messagingMetrics();
    const relay = new Relay({ journal, transport, subjectPrefix: prefix, pollMs: 20, batchSize: 200, metrics });
    const consumer = new Consumer({ name: `bench-${name}`, journal, handler: counter, metrics });
    const started = performance.now();
    const sub = await consumer.subscribe(transport, { subjects: [`${prefix}.>`], concurrency: 32 });
    relay.start();
    while (consumer.stats.applied < total) await new Promise((resolve) => setTimeout(resolve, 5));
    const seconds = (performance.now() - started) / 1000;
    await relay.stop();
    await sub.stop();
    print(
      `events ${name.padEnd(10)} journal=${label}: ${total} events relayed+consumed in ${seconds.toFixed(2)} s = ${Math.round(total / seconds)} events/s`,
    );
  } finally {
    await journal.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function benchEvents(print: (line: string) => void): Promise<void> {
  const inProcess = new InProcessTransport();
  await run(print, "in-process", inProcess, "bench");
  await inProcess.close();

  const url = process.env.ONCELY_TEST_NATS_URL ?? "nats://127.0.0.1:4222";
  let nc: Awaited<ReturnType<typeof connectNats>> | undefined;
  try {
    nc = await connectNats(url, { maxReconnectAttempts: 0, timeout: 2000 });
  } catch (error) {
    print(`events nats       skipped: no NATS at ${url} (${(error as Error).message})`);
    return;
  }
  const stream = `BENCH_${process.pid}_${Date.now().toString(36)}`.toUpperCase();
  const prefix = stream.toLowerCase();
  const transport = await NatsTransport.create({ connection: nc, stream, subjects: [`${prefix}.>`], storage: "file" });
  try {
    await run(print, "nats", transport, prefix);
  } finally {
    await transport.close();
    await transport.manager.streams.delete(stream).catch(() => {});
    await nc.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchEvents((line) => console.log(line));
}
