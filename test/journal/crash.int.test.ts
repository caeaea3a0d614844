import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openJournal } from "../../src/journal/open.js";
import type { Journal } from "../../src/journal/types.js";
import { freshPgSchema, PG_URL, probePostgres } from "../support/services.js";
import { startFixture } from "./children.js";
import { crashId, crashStream, EVENTS_PER_COMMIT } from "./fixtures/crash-shape.js";

/**
 * A child commits in a loop and is SIGKILLed after a random number of acknowledged commits.
 * After reopening: every acknowledged commit is whole, the one in flight is whole or absent,
 * and the stream has no holes.
 */
const ROUNDS = 3;

async function crashRound(backend: string, url: string, tag: string): Promise<number> {
  const killAfter = 20 + Math.floor(Math.random() * 40);
  let acked = 0;
  const { exited } = startFixture("commit-loop.ts", [backend, url, tag], (line, child) => {
    const match = /^ack (\d+)$/.exec(line);
    if (!match) return;
    acked = Number(match[1]);
    if (acked === killAfter) child.kill("SIGKILL");
  });
  const { signal, stderr } = await exited;
  expect(signal, `child ended without being killed: ${stderr}`).toBe("SIGKILL");
  expect(acked).toBeGreaterThanOrEqual(killAfter);
  return acked;
}

async function expectWholeCommits(journal: Journal, tag: string, acked: number): Promise<void> {
  const stream = crashStream(tag);
  const version = await journal.streamVersion(stream);
  expect(version % EVENTS_PER_COMMIT).toBe(0);
  const landed = version / EVENTS_PER_COMMIT;
  // Acknowledged commits are all there; at most the one in flight landed without its ack.
  expect(landed).toBeGreaterThanOrEqual(acked);
  expect(landed).toBeLessThanOrEqual(acked + 1);
  const events = await journal.readStream(stream);
  expect(events.map((e) => e.version)).toEqual(Array.from({ length: version }, (_, i) => i + 1));
  events.forEach((event, index) => {
    expect(event.data).toMatchObject({
      commit: Math.floor(index / EVENTS_PER_COMMIT) + 1,
      part: index % EVENTS_PER_COMMIT,
    });
  });
  for (let i = 1; i <= landed; i++) {
    const id = crashId(tag, i);
    expect((await journal.getOutbox(id))?.payload, `outbox of commit ${i}`).toEqual({ i });
    expect((await journal.getInbox(stream, id))?.reply, `inbox of commit ${i}`).toEqual({ i });
    expect((await journal.getDocument("crash", id))?.doc, `document of commit ${i}`).toEqual({ i });
  }
  for (let i = landed + 1; i <= landed + 3; i++) {
    const id = crashId(tag, i);
    expect(await journal.getOutbox(id), `outbox of unlanded commit ${i}`).toBeUndefined();
    expect(await journal.getInbox(stream, id), `inbox of unlanded commit ${i}`).toBeUndefined();
    expect(await journal.getDocument("crash", id), `document of unlanded commit ${i}`).toBeUndefined();
  }
}

describe("crash during a commit loop: sqlite", () => {
  const dir = mkdtempSync(join(tmpdir(), "oncely-crash-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(`keeps every acknowledged commit whole and no partial one (${ROUNDS} SIGKILLs)`, async () => {
    const url = `sqlite:${join(dir, "crash.db")}`;
    for (let round = 1; round <= ROUNDS; round++) {
      const tag = `r${round}`;
      const acked = await crashRound("sqlite", url, tag);
      const journal = await openJournal(url);
      try {
        await expectWholeCommits(journal, tag, acked);
      } finally {
        await journal.close();
      }
    }
  });
});

const service = await probePostgres();
describe.skipIf(!service.available)(
  `crash during a commit loop: postgres${service.available ? "" : ` (skipped: ${service.reason})`}`,
  () => {
    it(`keeps every acknowledged commit whole and no partial one (${ROUNDS} SIGKILLs)`, async () => {
      const { schema, drop } = await freshPgSchema("crash");
      try {
        const url = new URL(PG_URL);
        url.searchParams.set("schema", schema);
        for (let round = 1; round <= ROUNDS; round++) {
          const tag = `r${round}`;
          const acked = await crashRound("postgres", url.toString(), tag);
          const journal = await openJournal(url.toString());
          try {
            await expectWholeCommits(journal, tag, acked);
          } finally {
            await journal.close();
          }
        }
      } finally {
        await drop();
      }
    });
  },
);
