import Fastify, { type FastifyInstance } from "fastify";
import type { Journal } from "oncely";
import { consolePlugin, OPERATOR_ACTIONS } from "oncely/console";
import { memoryJournal, SimulatedClock, sequentialIds } from "oncely/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

// The console's lists read one page through the journal's paged queries (never every row), follow
// a cursor to the next page, filter in the query; bulk actions on dead letters take a dry-run count
// first and record one operator action per letter.

const TOKEN = "paged-console-token-0123456789";
const auth = { authorization: `Bearer ${TOKEN}` };

let journal: Journal;
let calls: string[];
let clock: SimulatedClock;
let app: FastifyInstance;

beforeEach(async () => {
  const base = memoryJournal();
  calls = [];
  // Records every journal method the console calls.
  journal = new Proxy(base, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls.push(String(name));
        return value.apply(target, args);
      };
    },
  });
  clock = new SimulatedClock();
  app = Fastify({ logger: false });
  await app.register(consolePlugin, { prefix: "/console", journal, token: TOKEN, clock, ids: sequentialIds("act") });
});
afterEach(async () => {
  await app.close();
});

const view = (path: string) => app.inject({ method: "GET", url: `/console/api/view/${path}`, headers: auth });
const post = (path: string, payload: object) =>
  app.inject({ method: "POST", url: `/console/api/${path}`, headers: auth, payload });

async function effects(n: number): Promise<void> {
  for (let i = 1; i <= n; i++) {
    clock.advance(1000);
    await journal.commit({
      outbox: [
        {
          id: `k-${i}`,
          category: "effect",
          kind: i % 2 ? "payment" : "email",
          stream: `order/o-${i}`,
          payload: {},
          notBefore: 0,
        },
      ],
      now: clock.now(),
    });
  }
}

describe("the console's lists", () => {
  it("read one page through the journal's paged queries, never a whole table", async () => {
    await effects(3);
    await journal.commit({
      deadLetters: [
        {
          id: "dl-1",
          consumer: "billing",
          messageId: null,
          payload: {},
          error: "boom",
          stack: null,
          attempts: 1,
          firstFailedAt: clock.now(),
          lastFailedAt: clock.now(),
        },
      ],
      now: clock.now(),
    });
    calls = [];
    for (const page of ["effects", "reconciliation", "dead-letters", "parked"]) {
      expect((await view(page)).statusCode).toBe(200);
    }
    expect(calls).not.toContain("listOutbox");
    expect(calls).not.toContain("listDeadLetters");
    expect(calls).toContain("pageOutbox");
    expect(calls).toContain("pageDeadLetters");
  });

  it("go on from a cursor to the next page, newest first, keeping the filters", async () => {
    await effects(205);
    const first = (await view("effects")).body;
    expect(first).toContain('data-key="k-205"');
    expect(first).not.toContain('data-key="k-5"');
    const next = /<a data-nav class="next" href="\/console\/effects\?after=([^"]+)">/.exec(first)?.[1];
    expect(next).toBeDefined();
    const second = (await view(`effects?after=${next}`)).body;
    expect([...second.matchAll(/<tr class="status-Pending" data-key="(k-\d+)"/g)].map((m) => m[1])).toEqual([
      "k-5",
      "k-4",
      "k-3",
      "k-2",
      "k-1",
    ]);
    const since = new Date(clock.now() - 2500).toISOString();
    const filtered = (await view(`effects?kind=payment&since=${encodeURIComponent(since)}`)).body;
    expect([...filtered.matchAll(/<tr class="status-Pending" data-key="(k-\d+)"/g)].map((m) => m[1])).toEqual([
      "k-205",
      "k-203",
    ]);
    const bad = await view("effects?since=yesterday&after=nonsense");
    expect(bad.statusCode).toBe(400);
    expect(bad.json().issues).toContain("since: must be a time such as 2026-05-01T12:00 (UTC)");
  });
});

describe("bulk actions on dead letters", () => {
  beforeEach(async () => {
    const letter = (id: string, consumer: string, error: string, at: number) => ({
      id,
      consumer,
      messageId: null,
      payload: {},
      error,
      stack: null,
      attempts: 5,
      firstFailedAt: at,
      lastFailedAt: at,
    });
    const t = clock.now();
    await journal.commit({
      deadLetters: [
        letter("d1", "billing", "unknown-key ordering-2", t - 3000),
        letter("d2", "billing", "unknown-key ordering-2", t - 2000),
        letter("d3", "billing", "timeout", t - 1000),
        letter("d4", "shipping", "unknown-key ordering-2", t),
      ],
      now: t,
    });
  });

  it("count the matching open letters (dry run), refuse a count that moved, and discard each, recorded one by one", async () => {
    const filter = { consumer: "billing", error: "unknown-key" };
    const dry = await post("dead-letters/bulk/count", filter);
    expect(dry.json()).toEqual({ message: "2 open dead letter(s) match", matched: 2 });
    const stale = await post("dead-letters/bulk", { ...filter, action: "discard", expected: 3, by: "ada" });
    expect(stale.statusCode).toBe(409);
    expect(stale.json().error).toContain("2 open dead letter(s) match now, not 3");
    expect((await journal.getDeadLetter("d1"))?.status).toBe("open");
    const done = await post("dead-letters/bulk", {
      ...filter,
      action: "discard",
      expected: 2,
      by: "ada",
      note: "fixed",
    });
    expect(done.statusCode).toBe(200);
    expect(done.json().message).toBe("discarded 2 of 2 matching dead letter(s)");
    expect((await journal.getDeadLetter("d1"))?.status).toBe("discarded");
    expect((await journal.getDeadLetter("d2"))?.status).toBe("discarded");
    expect((await journal.getDeadLetter("d3"))?.status).toBe("open");
    expect((await journal.getDeadLetter("d4"))?.status).toBe("open");
    const actions = (await journal.listDocuments(OPERATOR_ACTIONS)).map((d) => d.doc);
    expect(actions).toHaveLength(2);
    expect(actions).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ action: "discard", target: "d1", by: "ada", note: "fixed", via: "console" }),
        expect.objectContaining({ action: "discard", target: "d2", by: "ada", note: "fixed", via: "console" }),
      ]),
    );
  });

  it("refuses a bulk replay when the consumers are not registered for replay, taking nothing", async () => {
    const refused = await post("dead-letters/bulk", { consumer: "shipping", action: "replay", expected: 1, by: "ada" });
    expect(refused.statusCode).toBe(409);
    expect((await journal.getDeadLetter("d4"))?.status).toBe("open");
    expect(await journal.listDocuments(OPERATOR_ACTIONS)).toEqual([]);
  });

  it("offers the bulk forms on the dead-letters page with the count it shows", async () => {
    const body = (await view("dead-letters?consumer=billing&error=unknown-key")).body;
    expect(body).toContain("2 open dead letter(s) match");
    expect(body).toMatch(/form class="bulk-replay"[\s\S]*name="expected" value="2"/);
  });
});
