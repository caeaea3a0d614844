import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHost, type ProjectionHandler } from "../../src/index.js";
import { memoryJournal } from "../../src/testing/index.js";
import { type Ticks, ticker, ticksView } from "../host/fixtures/ticks.js";
import { probeNats } from "../support/services.js";
import { natsFixture } from "./support/nats.js";

const nats = await probeNats();

const SOURCES = ["ledger", "till"];
const IDS = ["a", "b"];
const TICKS = 5;

describe.skipIf(!nats.available)(`host.drain on NATS JetStream ${nats.reason}`, () => {
  let fx: Awaited<ReturnType<typeof natsFixture>>;
  beforeAll(async () => {
    fx = await natsFixture("drain");
  });
  afterAll(async () => {
    await fx?.cleanup();
  });

  it("returns only once the consumer's durable has nothing pending: every event projected", async () => {
    const journal = memoryJournal();
    // The first delivery of every event fails (a read model briefly down): it waits on the server
    // for its redelivery, in no handler's hands, while the relay has long marked it published.
    const failedOnce = new Set<string>();
    const flaky: ProjectionHandler<Ticks> = {
      ...ticksView,
      project: (doc, envelope, tools) => {
        if (!failedOnce.has(envelope.eventId)) {
          failedOnce.add(envelope.eventId);
          throw new Error("read model unavailable");
        }
        return ticksView.project(doc, envelope, tools);
      },
    };
    const host = createHost({
      journal,
      actors: SOURCES.map(ticker),
      relay: { transport: fx.transport, subjectPrefix: fx.prefix },
      consumers: [{ name: "ticks", handler: flaky, mode: "sequenced", subjects: [`${fx.prefix}.>`], retryBaseMs: 300 }],
    });
    await host.start();
    for (let n = 1; n <= TICKS; n++) {
      for (const source of SOURCES) for (const id of IDS) await host.send(`${source}/${id}`, { type: "Tick" });
    }
    await host.drain({ timeoutMs: 20_000 });
    const docs = await journal.listDocuments("ticks");
    expect(Object.fromEntries(docs.map((d) => [d.id, d.doc as Ticks]))).toEqual(
      Object.fromEntries(
        SOURCES.flatMap((s) => IDS.map((id) => [`${s}-${id}`, { version: TICKS, count: TICKS }] as const)),
      ),
    );
    expect(failedOnce.size).toBe(SOURCES.length * IDS.length * TICKS);
    await host.stop();
    await fx.transport.deleteConsumer("ticks");
  });
});
