import Fastify from "fastify";
import { consolePlugin } from "oncely/console";
import { memoryJournal, SimulatedClock } from "oncely/testing";
import { describe, expect, it } from "vitest";

// The Ownership page: workers (heartbeat documents) and the slices each owns by lease, with lease
// ages; "a single process owns every slice" when no lease or heartbeat is stored.

const TOKEN = "ownership-console-token-0123";

async function page(seed: (journal: ReturnType<typeof memoryJournal>, now: number) => Promise<void>) {
  const journal = memoryJournal();
  const clock = new SimulatedClock();
  await seed(journal, clock.now());
  clock.advance(5_000);
  const app = Fastify({ logger: false });
  await app.register(consolePlugin, { prefix: "/console", journal, token: TOKEN, clock });
  const response = await app.inject({
    url: "/console/api/view/ownership",
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  await app.close();
  return response.body;
}

describe("the ownership page", () => {
  it("says one process owns every slice when no worker keeps leases", async () => {
    expect(await page(async () => {})).toContain("a single process owns every slice");
  });

  it("shows each worker's heartbeat and slices, and each slice's owner, token and lease age", async () => {
    const body = await page(async (journal, now) => {
      await journal.commit({
        documents: [
          { collection: "oncely.workers", id: "w-1", doc: { until: now + 30_000 } },
          { collection: "oncely.workers", id: "w-2", doc: { until: now + 1_000 } },
          { collection: "oncely.slice-leases", id: "0", doc: { owner: "w-1", token: 3, until: now + 20_000 } },
          { collection: "oncely.slice-leases", id: "1", doc: { owner: "w-1", token: 1, until: now + 20_000 } },
          { collection: "oncely.slice-leases", id: "2", doc: { owner: "w-2", token: 7, until: now + 1_000 } },
          { collection: "oncely.slice-leases", id: "3", doc: { owner: null, token: 2, until: now } },
        ],
        now,
      });
    });
    expect(body).toContain("1 live worker(s); 4 slice lease(s), 2 not held now");
    expect(body).toMatch(/data-worker="w-1">[\s\S]*?<td>2 \(0, 1\)<\/td>/);
    expect(body).toMatch(/data-worker="w-2">[\s\S]*?lapsed[\s\S]*?<td>0<\/td>/);
    expect(body).toMatch(
      /data-slice="0"><td>0<\/td><td>w-1<\/td><td>3<\/td>\s*<td[^>]*>5 s ago<\/td>\s*<td class="">in 15 s<\/td>/,
    );
    expect(body).toMatch(/data-slice="3"><td>3<\/td><td><em>released<\/em><\/td>/);
  });
});
