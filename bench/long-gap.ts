import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sequentialIds } from "../src/core/clock.js";
import type { Journal } from "../src/journal/types.js";
import { Consumer } from "../src/messaging/consumer.js";
import type { Envelope } from "../src/messaging/envelope.js";
import { messagingMetrics } from "../src/messaging/metrics.js";
import { defineProjection } from "../src/messaging/projection.js";

/**
 * A long gap in one source stream of a sequenced projection: versions 2..N arrive first and are
 * parked, then version 1 arrives and releases all of them. Parking and releasing cost one point
 * read of the parked table each, so the time per message should stay flat as the gap grows:
 * printed for the first and the last thousand parked, and for the release.
 */
const PARKED = Number(process.env.ONCELY_BENCH_PARKED ?? 10_000);

const timeline = defineProjection<{ last: number; count: number }>({
  collection: "bench-long-gap",
  key: (e) => e.aggregateId,
  project: (doc, e) => ({ last: e.aggregateVersion ?? 0, count: (doc?.count ?? 0) + 1 }),
});

const event = (version: number): Envelope => ({
  eventId: `gap:${version}`,
  type: "Ticked",
  source: "bench",
  aggregateId: "gap",
  aggregateVersion: version,
  occurredAt: "2026-01-01T00:00:00.000Z",
  correlationId: "gap",
  causationId: `gap:${version}`,
  payload: { version },
});

async function run(journal: Journal, label: string, print: (line: string) => void): Promise<void> {
  const consumer = new Consumer({
    name: "long-gap",
    journal,
    handler: timeline,
    mode: "sequenced",
    ids: sequentialIds("dl"),
    metrics: messagingMetrics(),
  });
  const perThousand: number[] = [];
  let started = performance.now();
  for (let version = PARKED + 1; version >= 2; version--) {
    await consumer.handle(event(version));
    if ((PARKED + 2 - version) % 1000 === 0) {
      perThousand.push((performance.now() - started) / 1000);
      started = performance.now();
    }
  }
  const releaseStarted = performance.now();
  const result = await consumer.handle(event(1));
  const releaseMs = performance.now() - releaseStarted;
  const doc = (await journal.getDocument("bench-long-gap", "gap"))?.doc as { count: number } | undefined;
  if (result.released !== PARKED || doc?.count !== PARKED + 1) {
    throw new Error(`long gap on ${label}: released ${result.released}, projected ${doc?.count}`);
  }
  const first = perThousand[0] ?? 0;
  const last = perThousand.at(-1) ?? 0;
  print(
    `${label}: parked ${PARKED} — ${first.toFixed(3)} ms/message over the first thousand, ${last.toFixed(3)} over the last; ` +
      `released all in ${(releaseMs / 1000).toFixed(2)} s (${(releaseMs / PARKED).toFixed(3)} ms/version)`,
  );
}

export async function benchLongGap(print: (line: string) => void): Promise<void> {
  const { memoryJournal } = await import("../src/journal/memory.js");
  await run(memoryJournal(), "memory", print);
  const dir = mkdtempSync(join(tmpdir(), "oncely-bench-gap-"));
  try {
    const { sqliteJournal } = await import("../src/sqlite/index.js");
    const journal = sqliteJournal({ path: join(dir, "gap.db"), synchronous: "NORMAL" });
    await journal.migrate();
    try {
      await run(journal, "sqlite", print);
    } finally {
      await journal.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
