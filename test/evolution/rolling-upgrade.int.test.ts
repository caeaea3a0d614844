import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VersionTooNewError } from "../../src/core/upcast.js";
import type { Journal } from "../../src/journal/types.js";
import { InProcessTransport } from "../../src/messaging/transports/in-process.js";
import { postgresJournal } from "../../src/postgres/index.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";
import { chargeKey } from "./fixtures/orders-v1.js";
import type { OrderV2State } from "./fixtures/orders-v2.js";
import { inProcessClient, ProviderLedger } from "./fixtures/provider.js";
import { eventually, type ReleaseWorker, startRelease } from "./fixtures/workers.js";

const pg = await probePostgres();

/**
 * A rolling upgrade: release 1 and release 2 workers run at the same time against one PostgreSQL
 * journal, each with its own runtime and dispatcher, sharing the broker. Whichever claims a row or
 * gets a command, no worker decides on events it cannot read, nothing runs twice, nothing is lost.
 */
describe.skipIf(!pg.available)(`rolling upgrade on PostgreSQL${pg.available ? "" : ` (${pg.reason})`}`, () => {
  let schema: { schema: string; drop: () => Promise<void> };
  let journal: Journal;
  const workers: ReleaseWorker[] = [];

  beforeAll(async () => {
    schema = await freshPgSchema("rolling_upgrade");
    journal = postgresJournal({ connectionString: PG_URL, schema: schema.schema });
    await journal.migrate();
  });
  afterAll(async () => {
    for (const w of workers) await w.stop();
    await journal?.close();
    await schema?.drop();
  });

  it("release 1 and release 2 workers share one journal without fighting", async () => {
    const ledger = new ProviderLedger();
    const provider = inProcessClient(ledger);
    const transport = new InProcessTransport({ retryBaseMs: 20, retryMaxMs: 200 });
    const decidedByV1: { address: string; version: number }[] = [];
    const v1 = await startRelease(1, journal, provider, "v1", {
      transport,
      consume: false,
      decided: (address, version) => decidedByV1.push({ address, version }),
    });
    const v2 = await startRelease(2, journal, provider, "v2", { transport });
    workers.push(v1, v2);

    const old = Array.from({ length: 8 }, (_, i) => `r${i}`);
    const fresh = Array.from({ length: 8 }, (_, i) => `s${i}`);
    await Promise.all([
      ...old.map((id) =>
        v1.runtime.send(`order/${id}`, { type: "PlaceOrder", customerEmail: `${id}@x.io`, amount: 10 }),
      ),
      ...fresh.map((id) =>
        v2.runtime.send(`order/${id}`, { type: "PlaceOrder", email: `${id}@x.io`, amount: 20, channel: "app" }),
      ),
    ]);
    // A release 1 worker asked about an order release 2 placed refuses, retryably, and writes nothing.
    const before = await journal.streamVersion("order/s0");
    const refused = await v1.runtime
      .send("order/s0", { type: "PlaceOrder", customerEmail: "late@x.io", amount: 1 })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(VersionTooNewError);
    expect(await journal.streamVersion("order/s0")).toBeGreaterThanOrEqual(before);

    const all = [...old, ...fresh];
    const done = async () => {
      for (const id of all) {
        if ((await v2.runtime.state<OrderV2State>(`order/${id}`)).state.stage !== "done") return false;
      }
      return true;
    };
    expect(await eventually(done, 40_000)).toBe(true);

    for (const id of all) expect(ledger.requests.get(chargeKey(id)), `charges of ${id}`).toBe(1);
    expect(await journal.listOutbox({ status: ["dead", "reconcile", "resolving"] })).toEqual([]);
    expect(await journal.listDeadLetters()).toEqual([]);
    for (const id of all) {
      const types = (await journal.readStream(`order/${id}`)).map((e) => e.type);
      expect(
        types.filter((t) => t === "ChargeRequested"),
        id,
      ).toHaveLength(1);
      expect(
        types.filter((t) => t === "Charged"),
        id,
      ).toHaveLength(1);
    }
    // Release 1 decided, but only ever on streams it could read up to the version it decided on.
    expect(decidedByV1.length).toBeGreaterThan(old.length);
    for (const { address, version } of decidedByV1) {
      const events = await journal.readStream(address, 1, version);
      // Release 1 knows every type at version 1 only.
      expect(events.filter((e) => e.schemaVersion > 1).map((e) => `${address}@${e.version}`)).toEqual([]);
    }
  });
});
