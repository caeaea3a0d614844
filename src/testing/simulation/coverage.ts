import { checkpointsOf } from "../../journal/checkpoint-writes.js";
import { outcomeRecorded } from "../../journal/outcome-record.js";
import type { ClaimOptions, Commit, Journal, OutboxUpdate } from "../../journal/types.js";

/**
 * What a run exercised, besides its faults. A run that never recovered from a snapshot, never had
 * a publish fail, never met a provider without dedup, never released a parked message or never
 * took over a lease proves nothing about those paths; the report says so instead of staying quiet.
 */
export const COVERAGE_KINDS = [
  /** An actor was rebuilt from a snapshot plus the tail behind it. */
  "snapshot-recovery",
  /** The relay's publish threw (refused, or stored with its acknowledgement lost). */
  "relay-publish-failure",
  /** An effect ran against a provider that does not dedup by key. */
  "no-dedup-effect",
  /** A sequenced consumer applied a parked message once its gap closed. */
  "parked-release",
  /** A worker claimed an outbox row whose lease another process (or generation) had held. */
  "lease-takeover",
] as const;

export type CoverageKind = (typeof COVERAGE_KINDS)[number];

/** Coverage counters out of a run's (or a report's) counts, every kind present (0 when not exercised). */
export function coverageOf(counts: Record<string, number>): Record<CoverageKind, number> {
  return Object.fromEntries(COVERAGE_KINDS.map((kind) => [kind, counts[`coverage:${kind}`] ?? 0])) as Record<
    CoverageKind,
    number
  >;
}

/** The kinds a run or report did not exercise at all. */
export function unexercised(counts: Record<string, number>): CoverageKind[] {
  const coverage = coverageOf(counts);
  return COVERAGE_KINDS.filter((kind) => coverage[kind] === 0);
}

/**
 * A journal view that counts snapshot recoveries, lease takeovers, parked releases and rows
 * handed over at their commit (`hand-over`, and `hand-over:key-held` for a leased row whose key was
 * held; plain counts: only a system with a started dispatcher reaches them) as the process under simulation goes through them (the invariants' own
 * reads go around it), and reports an outbox update that landed without the lease, an effect or
 * message marked done by a worker's update instead of its owner's commit, and an effect started
 * again under a claim taken after its outcome was committed.
 */
export function observeCoverage(
  journal: Journal,
  count: (name: string) => void,
  violation: (invariant: string, message: string) => void,
): Journal {
  // Claim token -> effect rows it took although their final outcome was already committed.
  const finishedWhenClaimed = new Map<string, Set<string>>();
  const observed: Partial<Journal> = {
    // Lease fencing, checked from outside: a worker whose lease was taken over (or expired and
    // was claimed again) must not land a write on the row. With a provider that dedups, nothing
    // else would show it, yet the same worker would then call a provider that does not.
    async updateOutbox(id: string, owner: string, update: OutboxUpdate, now: number) {
      const before = await journal.getOutbox(id);
      const holder = before?.leaseOwner;
      const landed = await journal.updateOutbox(id, owner, update, now);
      // An effect's or a message's done transition is its owner's record of the outcome
      // (InboxEntry.outcomeOf): only the owner's commit may write it, never a worker's update.
      if (landed && update.status === "done" && before && before.category !== "event") {
        violation(
          "outcome-recorded-once-and-true",
          `${owner} marked ${before.category} ${id} done outside its owner's commit`,
        );
      }
      if (landed && holder !== owner) {
        violation(
          "lease-fencing",
          `${owner} updated outbox row ${id} while the lease was ${holder === null ? "free" : `held by ${holder}`}`,
        );
      }
      // An attempt is recorded right before the handler is called. A dispatcher that stalled with
      // its call in flight is legitimate (its claim predates the outcome); a claim taken after
      // the outcome's commit means the row was left runnable by that commit: the effect re-runs
      // at every claim, and only the provider's dedup or a lookup hides it.
      if (landed && update.attempts !== undefined && finishedWhenClaimed.get(owner)?.has(id)) {
        violation(
          "no-rerun-after-outcome",
          `${owner} started effect ${id} again (attempt ${update.attempts}) under a claim taken after its outcome was committed`,
        );
      }
      return landed;
    },
    async latestSnapshot(stream: string) {
      const snapshot = await journal.latestSnapshot(stream);
      if (snapshot) count("coverage:snapshot-recovery");
      return snapshot;
    },
    async readFromSnapshot(stream: string, limit?: number) {
      const tail = await journal.readFromSnapshot(stream, limit);
      if (tail.snapshot) count("coverage:snapshot-recovery");
      return tail;
    },
    async claimOutbox(options: ClaimOptions) {
      const open = await journal.listOutbox({ status: ["pending", "resolving"] });
      const held = new Map(
        open.filter((row) => row.leaseOwner !== null).map((row) => [row.id, row.leaseOwner as string]),
      );
      // Read before the claim, so an outcome committed while the claim runs is not counted.
      const finished = new Set<string>();
      for (const row of open) {
        if (row.category === "effect" && (await outcomeRecorded(journal, row.stream, row.id, `${row.id}#outcome`)))
          finished.add(row.id);
      }
      const rows = await journal.claimOutbox(options);
      for (const row of rows) {
        const before = held.get(row.id);
        if (before !== undefined && processOf(before) !== processOf(options.owner)) count("coverage:lease-takeover");
        if (finished.has(row.id)) {
          finishedWhenClaimed.set(options.owner, (finishedWhenClaimed.get(options.owner) ?? new Set()).add(row.id));
        }
      }
      return rows;
    },
    async commit(commit: Commit) {
      let releases = 0;
      const advanced = checkpointsOf(commit).find((c) => commit.unpark?.some((u) => u.source === c.source));
      if (advanced && commit.unpark?.length) {
        const { consumer, source } = advanced;
        const parked = await journal.listParked(consumer, source);
        releases = commit.unpark.filter((u) => parked.some((p) => p.version === u.version)).length;
      }
      const result = await journal.commit(commit);
      for (let i = 0; i < releases; i++) count("coverage:parked-release");
      // Rows inserted already leased to a started dispatcher of the committing process: handed over.
      // A leased row not inserted (its key was held) must not be: `hand-over:key-held` counts the chance.
      const inserted = new Set(result.inserted?.map((row) => row.id));
      for (const row of commit.outbox ?? []) {
        if (row.lease) count(inserted.has(row.id) ? "hand-over" : "hand-over:key-held");
      }
      return result;
    },
  };
  return new Proxy(journal, {
    get(target, property, receiver) {
      const own = observed[property as keyof Journal];
      if (own) return own;
      const value = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** A lease token is `<owner>#<claim>.<nonce>`: the owner names the process (and its generation). */
const processOf = (lease: string) => lease.split("#")[0];
