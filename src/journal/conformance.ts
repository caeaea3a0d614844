import { type Random, seededRandom } from "../core/clock.js";
import { sliceLeaseConformance } from "../ownership/conformance-slice-leases.js";
import type { ConformanceSubject, ConformanceTestApi } from "./conformance-api.js";
import { atomicityConformance } from "./conformance-atomicity.js";
import { consoleQueriesConformance } from "./conformance-console.js";
import { consumerStateConformance } from "./conformance-consumer-state.js";
import { deadLetterConformance } from "./conformance-dead-letters.js";
import { documentConformance } from "./conformance-documents.js";
import { CONFORMANCE_SEED, conformanceContext } from "./conformance-fixtures.js";
import { groupCommitConformance } from "./conformance-group-commit.js";
import { inboxConformance } from "./conformance-inbox.js";
import { outboxConformance } from "./conformance-outbox.js";
import { outboxClaimConformance } from "./conformance-outbox-claims.js";
import { outboxSlicesConformance } from "./conformance-outbox-slices.js";
import { publishedLogConformance } from "./conformance-published.js";
import { publishedCommitConformance } from "./conformance-published-commit.js";
import { sequencingConformance } from "./conformance-sequencing.js";
import { stateReadsConformance } from "./conformance-state-reads.js";
import { storableTextConformance } from "./conformance-storable.js";
import { streamConformance } from "./conformance-streams.js";
import type { Journal } from "./types.js";

export type { ConformanceAssertion, ConformanceSubject, ConformanceTestApi } from "./conformance-api.js";

/**
 * The journal contract, as tests. Run it on every back end, with your test runner's functions:
 *
 * @example
 * import { afterEach, beforeEach, describe, expect, it } from "vitest";
 * journalConformance({ describe, it, expect, beforeEach, afterEach }, "memory", async () => {
 *   const journal = new MemoryJournal();
 *   return { journal, reopen: async () => journal, cleanup: async () => {} };
 * });
 *
 * The tests are grouped by role, one file each (`conformance-*.ts`); each group gets the running
 * test's journal. Ids the tests draw come from a random seeded anew before each test
 * (`CONFORMANCE_SEED`), so a failing test fails the same way when run again.
 */
export function journalConformance(
  api: ConformanceTestApi,
  label: string,
  factory: () => Promise<ConformanceSubject>,
): void {
  const { describe, beforeEach, afterEach } = api;
  describe(`journal conformance: ${label}`, () => {
    let subject: ConformanceSubject;
    let j: Journal;
    let random: Random = seededRandom(CONFORMANCE_SEED);
    beforeEach(async () => {
      random = seededRandom(CONFORMANCE_SEED);
      subject = await factory();
      j = subject.journal;
      await j.migrate();
    });
    afterEach(async () => {
      await subject.cleanup();
    });

    storableTextConformance(api, () => j);
    publishedLogConformance(api, () => j);
    publishedCommitConformance(api, () => j);
    consumerStateConformance(api, () => j);
    stateReadsConformance(api, () => j);
    sliceLeaseConformance(
      api,
      () => j,
      async () => (subject.secondWriter ? subject.secondWriter() : j),
    );
    outboxSlicesConformance(api, () => j);
    consoleQueriesConformance(api, () => j);

    const ctx = conformanceContext(api, () => ({ subject, random }));
    streamConformance(ctx);
    atomicityConformance(ctx);
    groupCommitConformance(ctx);
    outboxClaimConformance(ctx);
    outboxConformance(ctx);
    inboxConformance(ctx);
    sequencingConformance(ctx);
    deadLetterConformance(ctx);
    documentConformance(ctx);
  });
}
