import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { seededRandom } from "../../src/core/clock.js";
import { createHost, JournalTransport } from "../../src/index.js";
import { sqliteJournal } from "../../src/sqlite/index.js";
import { type Ticks, tick, ticker, ticksView } from "./fixtures/ticks.js";

const SOURCES = ["ledger", "till"];
const IDS = ["a", "b"];
const TICKS = 5;

/**
 * `drain` on SQLite with the journal transport and a sequenced projection: the relay has long
 * marked every event published while the consumer's reader still holds entries back (injected
 * delays and reordering, which also park messages ahead of their predecessors).
 */
describe("drain on SQLite, journal transport, sequenced", () => {
  const dir = mkdtempSync(join(tmpdir(), "oncely-drain-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("returns only once every event of every source stream is projected", async () => {
    const journal = sqliteJournal({ path: join(dir, "drain.db") });
    await journal.migrate();
    const transport = new JournalTransport({
      journal,
      pollMs: 50,
      random: seededRandom(7),
      faults: { maxDelayMs: 60, reorderWindow: 4 },
    });
    const host = createHost({
      journal,
      actors: SOURCES.map(ticker),
      relay: { transport },
      consumers: [{ name: "ticks", handler: ticksView, mode: "sequenced", subjects: ["oncely.>"] }],
    });
    await host.start();
    for (let n = 1; n <= TICKS; n++) {
      for (const source of SOURCES) for (const id of IDS) await host.send(`${source}/${id}`, { type: "Tick" });
    }
    await host.drain({ timeoutMs: 15_000 });
    const docs = await journal.listDocuments("ticks");
    // Each stream has a document of its own, every version applied once, in order.
    expect(Object.fromEntries(docs.map((d) => [d.id, d.doc as Ticks]))).toEqual(
      Object.fromEntries(
        SOURCES.flatMap((s) => IDS.map((id) => [`${s}-${id}`, { version: TICKS, count: TICKS }] as const)),
      ),
    );
    expect(await journal.listParked("ticks")).toEqual([]);
    await host.stop();
    await transport.close();
    await journal.close();
  });

  it("releases what a crash left parked behind an applied version, without waiting for a gap check", async () => {
    const journal = sqliteJournal({ path: join(dir, "parked.db") });
    await journal.migrate();
    // As a crash between the apply of version 1 and the release of version 2 leaves it.
    await journal.commit({
      checkpoint: { consumer: "ticks", source: "ledger/a", version: 1, expected: 0 },
      park: [{ consumer: "ticks", source: "ledger/a", version: 2, message: tick("ledger", "a", 2) }],
      now: Date.now(),
    });
    const transport = new JournalTransport({ journal, pollMs: 50 });
    const host = createHost({
      journal,
      actors: [ticker("ledger")],
      consumers: [
        {
          name: "ticks",
          handler: ticksView,
          mode: "sequenced",
          subjects: ["oncely.>"],
          transport,
          gapCheckEveryMs: false,
        },
      ],
    });
    await host.start();
    await host.drain({ timeoutMs: 5_000 });
    expect(await journal.listParked("ticks")).toEqual([]);
    expect((await journal.getDocument("ticks", "ledger-a"))?.doc).toEqual({ version: 2, count: 1 });
    expect(await journal.getCheckpoint("ticks", "ledger/a")).toBe(2);
    await host.stop();
    await transport.close();
    await journal.close();
  });
});
