import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openJournal } from "../../src/journal/open.js";
import { PUBLISHED_READER_SOURCE } from "../../src/journal/published.js";
import { JournalTransport } from "../../src/messaging/transports/journal.js";
import { startFixture } from "../journal/children.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";
import { orderEvents, perEventCount } from "./support/orders.js";

/**
 * A consumer process reading the journal transport is SIGKILLed mid-stream, again and again, and
 * restarted; then a last one runs until it has read the whole log. Every event was projected
 * exactly once (the inbox absorbs what was in flight at a kill), none is missing, and the stored
 * position reached the end of the log.
 */
const KILLS = 3;
const EVENTS = orderEvents(Array.from({ length: 60 }, () => 5));

/** Run the consumer child; kill it after `killAfter` settled deliveries, or once idle when undefined. */
async function runChild(url: string, killAfter: number | undefined): Promise<number> {
  let settled = 0;
  const { exited } = startFixture("log-consumer.ts", [url], (line, child) => {
    if (line === "settled") settled++;
    if (killAfter !== undefined ? settled === killAfter : line === "idle") child.kill("SIGKILL");
  });
  const { signal, stderr } = await exited;
  expect(signal, `child ended without being killed: ${stderr}`).toBe("SIGKILL");
  return settled;
}

async function crashAndResume(url: string): Promise<void> {
  const journal = await openJournal(url);
  try {
    const transport = new JournalTransport({ journal });
    for (const envelope of EVENTS) await transport.publish(envelope, `shop.orders.${envelope.type}`);
  } finally {
    await journal.close();
  }
  let deliveries = 0;
  for (let kill = 1; kill <= KILLS; kill++) deliveries += await runChild(url, 20 + Math.floor(Math.random() * 40));
  deliveries += await runChild(url, undefined);
  const after = await openJournal(url);
  try {
    const docs = await after.listDocuments(perEventCount.collection);
    expect(docs.map((d) => d.id).sort()).toEqual(EVENTS.map((e) => e.eventId).sort());
    const counts = docs.map((d) => (d.doc as { count: number }).count);
    expect(counts.every((c) => c === 1)).toBe(true);
    const head = (await after.readPublished(0)).at(-1)?.position;
    expect(await after.getCheckpoint("crash-consumer", PUBLISHED_READER_SOURCE)).toBe(head);
    // Redelivered: at most what was in flight at each kill, never the whole log again.
    expect(deliveries).toBeGreaterThanOrEqual(EVENTS.length);
    expect(deliveries).toBeLessThan(EVENTS.length * 2);
  } finally {
    await after.close();
  }
}

describe("journal transport: a consumer process killed mid-stream: sqlite", () => {
  const dir = mkdtempSync(join(tmpdir(), "oncely-log-crash-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  it(`resumes from its stored position: every event once in effect, none lost (${KILLS} SIGKILLs)`, async () => {
    await crashAndResume(`sqlite:${join(dir, "log.db")}`);
  });
});

const service = await probePostgres();
describe.skipIf(!service.available)(
  `journal transport: a consumer process killed mid-stream: postgres${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    it(`resumes from its stored position: every event once in effect, none lost (${KILLS} SIGKILLs)`, async () => {
      const { schema, drop } = await freshPgSchema("logcrash");
      try {
        const url = new URL(PG_URL);
        url.searchParams.set("schema", schema);
        await crashAndResume(url.toString());
      } finally {
        await drop();
      }
    });
  },
);
