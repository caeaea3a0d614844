import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Registry } from "prom-client";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createRuntime } from "../../src/core/runtime.js";
import { type Ownership, sliceOfAddress } from "../../src/core/slices.js";
import { Dispatcher } from "../../src/effects/dispatcher.js";
import { createHost } from "../../src/host/host.js";
import type { Journal } from "../../src/journal/types.js";
import { CommandRouter, forwardRowId } from "../../src/ownership/router.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { sqliteJournal } from "../../src/sqlite/index.js";
import { type Parcel, parcelActor } from "../effects/fixtures/parcel-actor.js";
import { freshPgSchema, PG_URL } from "../support/services.js";

/**
 * Two workers on one journal, each owning half of the slices (a fixed ownership: the interface,
 * as a lease manager answers it, with nothing moving). Commands sent to the wrong worker are
 * forwarded to the owner and answered once; effects and timers of a slice run only on its owner.
 */
const SLICES = 8;

/** Owns the slices of one parity: worker 0 the even ones, worker 1 the odd ones. */
const half = (parity: 0 | 1): Ownership => ({
  sliceCount: SLICES,
  owns: (slice) => slice % 2 === parity,
  fence: () => undefined,
  onChange: () => () => {},
});

/** Parcel ids whose slice has the given parity. */
function idOwnedBy(parity: 0 | 1, tag: string): string {
  for (let i = 0; ; i++) {
    const id = `${tag}${i}`;
    if (sliceOfAddress(`parcel/${id}`, SLICES) % 2 === parity) return id;
  }
}

function worker(journal: Journal, parity: 0 | 1, registry: Registry) {
  // A deadline due at once: a timer row as soon as the parcel starts.
  const runtime = createRuntime({ journal, actors: [parcelActor(0)], registry });
  const ownership = half(parity);
  const router = new CommandRouter({ runtime, journal, ownership, registry, pollMs: { initial: 2, max: 20 } });
  const dispatcher = new Dispatcher({ journal, runtime: router, owner: `w${parity}`, ownership, registry });
  return { runtime, router, dispatcher };
}

const forwarded = async (registry: Registry) =>
  (await registry.getSingleMetric("oncely_commands_forwarded_total")?.get())?.values.reduce((n, v) => n + v.value, 0);

function scenarios(open: () => Promise<[Journal, Journal]>) {
  let journals: Journal[] = [];
  afterEach(async () => {
    for (const j of journals) await j.close();
    journals = [];
  });

  it("forwards a command sent to the wrong worker; the owner runs it once; a duplicate forward gets the stored reply", async () => {
    journals = await open();
    const [ja, jb] = journals as [Journal, Journal];
    const registry = new Registry();
    const a = worker(ja, 0, registry);
    const b = worker(jb, 1, new Registry());
    const id = idOwnedBy(1, "fw");
    const sent = a.router.send(`parcel/${id}`, { type: "Ship" }, { messageId: "req-1" });
    // The forward row is in b's slice: a's dispatcher does not take it, b's delivers it.
    await expect.poll(() => ja.getOutbox(forwardRowId(`parcel/${id}`, "req-1"))).toBeDefined();
    expect(await a.dispatcher.runOnce()).toBe(0);
    expect(await b.dispatcher.runOnce()).toBe(1);
    expect(await sent).toMatchObject({ forwarded: true, duplicate: false });
    expect(a.runtime.stats.commands).toBe(0);
    expect(b.runtime.stats.commands).toBe(1);
    // Sent again with the same id (a retry by the caller): the row's stored reply, nothing runs again.
    expect(await a.router.send(`parcel/${id}`, { type: "Ship" }, { messageId: "req-1" })).toMatchObject({
      forwarded: true,
      duplicate: true,
    });
    expect(await b.dispatcher.runOnce()).toBe(0);
    expect(await jb.readStream(`parcel/${id}`)).toHaveLength(1);
    expect(await forwarded(registry)).toBe(2);
    // Sent by the owner itself under the same message id: its inbox answers, nothing appended.
    expect(await b.router.send(`parcel/${id}`, { type: "Ship" }, { messageId: "req-1" })).toMatchObject({
      forwarded: false,
      duplicate: true,
    });
    expect(await jb.readStream(`parcel/${id}`)).toHaveLength(1);
  });

  it("a request the owner handled first and another worker forwards later is answered as a repeat", async () => {
    journals = await open();
    const [ja, jb] = journals as [Journal, Journal];
    const a = worker(ja, 0, new Registry());
    const b = worker(jb, 1, new Registry());
    const id = idOwnedBy(1, "rp");
    // The first attempt reached the owner; the client's retry reaches the other worker.
    expect(await b.router.send(`parcel/${id}`, { type: "Ship" }, { messageId: "req-2" })).toMatchObject({
      forwarded: false,
      duplicate: false,
    });
    const retried = a.router.send(`parcel/${id}`, { type: "Ship" }, { messageId: "req-2" });
    await expect.poll(() => ja.getOutbox(forwardRowId(`parcel/${id}`, "req-2"))).toBeDefined();
    expect(await b.dispatcher.runOnce()).toBe(1);
    expect(await retried).toMatchObject({ forwarded: true, duplicate: true });
    expect(await jb.readStream(`parcel/${id}`)).toHaveLength(1);
  });

  it("runs the effects and timers of a slice only on the worker that owns it", async () => {
    journals = await open();
    const [ja, jb] = journals as [Journal, Journal];
    const a = worker(ja, 0, new Registry());
    const b = worker(jb, 1, new Registry());
    const mine = idOwnedBy(0, "tm");
    const theirs = idOwnedBy(1, "tm");
    // Each started on its owner (the router sends locally): a timer row due now in each slice.
    await a.router.send(`parcel/${mine}`, { type: "Start" });
    await b.router.send(`parcel/${theirs}`, { type: "Start" });
    expect(await a.dispatcher.runOnce()).toBe(1);
    expect((await ja.getOutbox(`parcel:${mine}:ship-by`))?.status).toBe("done");
    expect((await ja.getOutbox(`parcel:${theirs}:ship-by`))?.status).toBe("pending");
    expect(await b.dispatcher.runOnce()).toBe(1);
    expect((await jb.getOutbox(`parcel:${theirs}:ship-by`))?.status).toBe("done");
    expect((await a.runtime.state<Parcel>(`parcel/${mine}`)).state.overdue).not.toBeNull();
    expect((await b.runtime.state<Parcel>(`parcel/${theirs}`)).state.overdue).not.toBeNull();
  });
}

describe("routing to the owner: SQLite file, two workers", () => {
  const dir = mkdtempSync(join(tmpdir(), "oncely-routing-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  scenarios(async () => {
    const path = join(dir, `routing-${++files}.db`);
    const first = sqliteJournal({ path, sliceCount: SLICES });
    await first.migrate();
    const second = sqliteJournal({ path, sliceCount: SLICES });
    return [first, second];
  });
});

describe("routing to the owner: PostgreSQL, two workers", () => {
  const drops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const drop of drops) await drop();
  });
  scenarios(async () => {
    const { schema, drop } = await freshPgSchema("routing");
    drops.push(drop);
    const first = postgresJournal({ connectionString: PG_URL, schema, sliceCount: SLICES, max: 3 });
    await first.migrate();
    const second = postgresJournal({ connectionString: PG_URL, schema, sliceCount: SLICES, max: 3 });
    return [first, second];
  });
});

describe("routing to the owner: two hosts on one SQLite file", () => {
  const dir = mkdtempSync(join(tmpdir(), "oncely-routing-hosts-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("host.send forwards a command for an actor the other host owns; its dispatcher answers it", async () => {
    const path = join(dir, "hosts.db");
    const ja = sqliteJournal({ path, sliceCount: SLICES });
    await ja.migrate();
    const jb = sqliteJournal({ path, sliceCount: SLICES });
    const host = (journal: Journal, parity: 0 | 1) =>
      createHost({
        journal,
        actors: [parcelActor(60_000)],
        name: `h${parity}`,
        ownership: half(parity),
        dispatcher: { pollIntervalMs: 10 },
        router: { pollMs: { initial: 2, max: 20 } },
        gapCheckEveryMs: false,
      });
    const [a, b] = [host(ja, 0), host(jb, 1)];
    await a.start();
    await b.start();
    try {
      const id = idOwnedBy(1, "h");
      const result = await a.send(`parcel/${id}`, { type: "Ship" }, { messageId: "ship-1" });
      expect(result).toMatchObject({ forwarded: true, duplicate: false });
      expect(a.runtime.stats.commands).toBe(0);
      expect(b.runtime.stats.commands).toBe(1);
      expect((await b.state<Parcel>(`parcel/${id}`)).state.shipped).toBe(true);
    } finally {
      await a.stop();
      await b.stop();
      await ja.close();
      await jb.close();
    }
  });
});
