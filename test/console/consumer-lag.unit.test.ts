import Fastify from "fastify";
import { observeConsumerLag } from "oncely";
import { PUBLISHED_READER_SOURCE } from "oncely/advanced";
import { consolePlugin } from "oncely/console";
import { memoryJournal, SimulatedClock } from "oncely/testing";
import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";

// Consumer lag from the journal: a reader of the published log against its head, and per source
// what a sequenced consumer holds parked behind a gap; as a console page and as metrics.

const TOKEN = "lag-console-token-0123456789";

async function seeded() {
  const journal = memoryJournal();
  const clock = new SimulatedClock();
  for (let i = 1; i <= 5; i++)
    await journal.appendPublished({ messageId: `p${i}`, subject: "s", body: "{}" }, clock.now());
  await journal.commit({
    checkpoint: { consumer: "billing", source: PUBLISHED_READER_SOURCE, version: 2 },
    now: clock.now(),
  });
  await journal.commit({
    checkpoint: { consumer: "audit", source: PUBLISHED_READER_SOURCE, version: 5 },
    now: clock.now(),
  });
  await journal.commit({ checkpoint: { consumer: "shipping", source: "order/o-1", version: 3 }, now: clock.now() });
  await journal.commit({
    park: [
      { consumer: "shipping", source: "order/o-1", version: 6, message: {} },
      { consumer: "shipping", source: "order/o-1", version: 5, message: {} },
    ],
    now: clock.now(),
  });
  clock.advance(90_000);
  return { journal, clock };
}

describe("consumer lag", () => {
  it("is a console page: each reader's position against the log's head, and what waits parked per source", async () => {
    const { journal, clock } = await seeded();
    const app = Fastify({ logger: false });
    await app.register(consolePlugin, { prefix: "/console", journal, token: TOKEN, clock });
    const body = (await app.inject({ url: "/console/api/view/lag", headers: { authorization: `Bearer ${TOKEN}` } }))
      .body;
    await app.close();
    expect(body).toMatch(
      /<tr data-consumer="billing"><td>billing<\/td><td>published log<\/td><td>2<\/td><td>5<\/td>\s*<td class="behind">3<\/td>/,
    );
    expect(body).toMatch(
      /<tr data-consumer="audit"><td>audit<\/td><td>published log<\/td><td>5<\/td><td>5<\/td>\s*<td class="">0<\/td>/,
    );
    expect(body).toMatch(/data-source="order\/o-1">[\s\S]*?<td>3<\/td><td>5<\/td>\s*<td>2<\/td><td[^>]*>2 min<\/td>/);
  });

  it("is metrics: oncely_consumer_lag, oncely_consumer_parked and the oldest parked age", async () => {
    const { journal, clock } = await seeded();
    const registry = new Registry();
    observeConsumerLag({ journal, registry, clock });
    const text = await registry.metrics();
    expect(text).toContain('oncely_consumer_lag{consumer="billing",source="published-log"} 3');
    expect(text).toContain('oncely_consumer_lag{consumer="audit",source="published-log"} 0');
    expect(text).toContain('oncely_consumer_parked{consumer="shipping",source="order/o-1"} 2');
    expect(text).toContain('oncely_consumer_parked_oldest_age_seconds{consumer="shipping",source="order/o-1"} 90');
  });
});
