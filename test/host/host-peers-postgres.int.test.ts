import type { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { sliceOfAddress } from "../../src/core/slices.js";
import type { SliceLeaseManager } from "../../src/ownership/lease-manager.js";
import { forwardRowId } from "../../src/ownership/router.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";
import { PEER_SLICES, peerHost } from "./support/peer-hosts.js";

/**
 * Two workers as two processes would be: each its own PostgreSQL journal (pool, group committer,
 * listener) on one schema, its own leases, and a peer port. The heartbeats that carry the
 * endpoints, the leases and the forward rows are the real ones in PostgreSQL.
 */
const SLICES = PEER_SLICES;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const pg = await probePostgres();

async function twoWorkers(advertiseB?: string) {
  const fresh = await freshPgSchema("host_peers");
  cleanups.push(() => fresh.drop());
  const make = async (workerId: string, advertise?: string) => {
    const journal = postgresJournal({ connectionString: PG_URL, schema: fresh.schema, sliceCount: SLICES });
    await journal.migrate();
    const { host, registry } = peerHost(journal, workerId, advertise);
    await host.start();
    cleanups.push(async () => {
      await host.stop();
      await journal.close();
    });
    return { host, journal, registry, leases: host.ownership as SliceLeaseManager };
  };
  const a = await make("pg-worker-a");
  const b = await make("pg-worker-b", advertiseB);
  for (let i = 0; i < 10 && a.leases.ownedSlices().length !== SLICES / 2; i++) {
    await a.leases.round();
    await a.leases.releasesSettled();
    await b.leases.round();
  }
  await a.leases.round();
  await b.leases.round();
  expect(b.leases.ownedSlices()).toHaveLength(SLICES / 2);
  let ofB = "";
  for (let i = 0; !ofB; i++) if (b.leases.owns(sliceOfAddress(`counter/${i}`, SLICES))) ofB = `counter/${i}`;
  return { a, b, ofB };
}

const sentToPeer = async (registry: Registry) =>
  (await registry.getMetricsAsJSON())
    .find((m) => m.name === "oncely_commands_sent_to_peer_total")
    ?.values.reduce((n, v) => n + v.value, 0) ?? 0;

describe.skipIf(!pg.available)(`peers between two workers on one PostgreSQL journal ${pg.reason}`, () => {
  it("finds the owner's endpoint in its heartbeat and runs the command there, with no forward row", async () => {
    const { a, b, ofB } = await twoWorkers();
    expect(a.leases.peerEndpointOf(sliceOfAddress(ofB, SLICES))).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await a.host.send(ofB, { type: "Add", n: 3 }, { messageId: "pg-1" })).toMatchObject({
      reply: 3,
      forwarded: true,
      duplicate: false,
    });
    expect(await a.journal.getOutbox(forwardRowId(ofB, "pg-1"))).toBeUndefined();
    expect(await b.journal.readStream(ofB)).toHaveLength(1);
    expect(await sentToPeer(a.registry)).toBe(1);
  });

  it("goes through the journal, once, when the owner's advertised endpoint answers nothing", async () => {
    const { a, b, ofB } = await twoWorkers("http://127.0.0.1:1");
    expect(await a.host.send(ofB, { type: "Add", n: 4 }, { messageId: "pg-2" })).toMatchObject({
      reply: 4,
      forwarded: true,
    });
    expect(await a.journal.getOutbox(forwardRowId(ofB, "pg-2"))).toMatchObject({ status: "done" });
    expect(await b.journal.readStream(ofB)).toHaveLength(1);
    expect(await sentToPeer(a.registry)).toBe(0);
  });
});
