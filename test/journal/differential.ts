import fc from "fast-check";
import { expect } from "vitest";
import type {
  ClaimOptions,
  Commit,
  CommitResult,
  Journal,
  OutboxCategory,
  OutboxRow,
  OutboxStatus,
  OutboxUpdate,
} from "../../src/journal/types.js";

/**
 * Differential testing: random sequences of journal operations run on the memory journal (the
 * reference semantics) and on another back end must give the same answers, the same errors and
 * the same final state. Outbox `seq` is compared by order only (PostgreSQL identities may skip).
 */

const STREAMS = ["s/0", "s/1", "s/2"];
const OUTBOX_IDS = ["o1", "o2", "o3", "o4", "o5"];
const CONSUMERS = ["c1", "c2"];
const MESSAGES = ["m1", "m2", "m3"];
const SOURCES = ["src1", "src2"];
const DEAD_IDS = ["dl1", "dl2", "dl3"];
const DOC_IDS = ["d1", "d2", "d3"];
const CATEGORIES: OutboxCategory[] = ["effect", "message", "event"];
const STATUSES: OutboxStatus[] = ["pending", "resolving", "reconcile", "done", "dead"];

type ExpectedMode = "current" | "stale" | "ahead" | "none";

interface CommitSpec {
  stream: string | undefined;
  expected: ExpectedMode;
  events: number;
  snapshot: boolean;
  outbox: { id: string; category: OutboxCategory; stream: string; delay: number; payload: unknown }[];
  outboxDone: { id: string; outcome: string; result: unknown }[];
  inbox: { consumer: string; messageId: string; reply: unknown } | undefined;
  /** A final outcome of row `id` recorded by `consumer` (InboxEntry.outcomeOf), in place of `inbox`. */
  outcome: { consumer: string; id: string } | undefined;
  checkpoint: { consumer: string; source: string; version: number; expected?: number } | undefined;
  park: { consumer: string; source: string; version: number; message: unknown }[];
  unpark: { consumer: string; source: string; version: number }[];
  deadLetters: string[];
  documents: { id: string; doc: unknown | null }[];
}

type Op =
  | { kind: "commit"; spec: CommitSpec }
  | { kind: "claim"; options: Omit<ClaimOptions, "now"> }
  | { kind: "update"; id: string; owner: string; update: OutboxUpdate }
  | { kind: "force"; id: string; update: OutboxUpdate }
  | { kind: "prune"; back: number }
  /** No limit: which rows of a larger set a limited batch takes is the back end's choice. */
  | { kind: "pruneOutbox"; back: number }
  | { kind: "resolve"; id: string; status: "replayed" | "discarded" }
  | { kind: "tick"; ms: number };

const json = fc.oneof(fc.constant(null), fc.integer(), fc.string({ maxLength: 6 }), fc.constant({ a: [1, "x"] }));
const update: fc.Arbitrary<OutboxUpdate> = fc.record(
  {
    status: fc.constantFrom(...STATUSES),
    attempts: fc.nat(5),
    notBefore: fc.nat(200),
    lastError: fc.option(fc.string({ maxLength: 5 }), { nil: null }),
    outcome: fc.option(fc.constantFrom("completed", "failed"), { nil: null }),
    result: json,
    releaseLease: fc.boolean(),
  },
  { requiredKeys: [] },
);

const commitSpec: fc.Arbitrary<CommitSpec> = fc.record({
  stream: fc.option(fc.constantFrom(...STREAMS), { nil: undefined }),
  expected: fc.constantFrom<ExpectedMode>("current", "current", "current", "stale", "ahead", "none"),
  events: fc.nat(3),
  snapshot: fc.boolean(),
  outbox: fc.array(
    fc.record({
      id: fc.constantFrom(...OUTBOX_IDS),
      category: fc.constantFrom<OutboxCategory>("effect", "event"),
      stream: fc.constantFrom("s/0", "s/1"),
      delay: fc.constantFrom(0, 0, 5, 20),
      payload: json,
    }),
    { maxLength: 2 },
  ),
  outboxDone: fc.array(
    fc.record({ id: fc.constantFrom(...OUTBOX_IDS), outcome: fc.constantFrom("completed", "failed"), result: json }),
    { maxLength: 1 },
  ),
  inbox: fc.option(
    fc.record({ consumer: fc.constantFrom(...CONSUMERS), messageId: fc.constantFrom(...MESSAGES), reply: json }),
    { nil: undefined },
  ),
  outcome: fc.option(fc.record({ consumer: fc.constantFrom("s/0", "s/1"), id: fc.constantFrom(...OUTBOX_IDS) }), {
    nil: undefined,
  }),
  checkpoint: fc.option(
    fc.record(
      {
        consumer: fc.constant("k"),
        source: fc.constantFrom(...SOURCES),
        version: fc.nat(5),
        expected: fc.nat(3),
      },
      { requiredKeys: ["consumer", "source", "version"] },
    ),
    { nil: undefined },
  ),
  park: fc.array(
    fc.record({ consumer: fc.constant("k"), source: fc.constantFrom(...SOURCES), version: fc.nat(4), message: json }),
    { maxLength: 2 },
  ),
  unpark: fc.array(fc.record({ consumer: fc.constant("k"), source: fc.constantFrom(...SOURCES), version: fc.nat(4) }), {
    maxLength: 1,
  }),
  deadLetters: fc.array(fc.constantFrom(...DEAD_IDS), { maxLength: 1 }),
  documents: fc.array(fc.record({ id: fc.constantFrom(...DOC_IDS), doc: fc.option(json, { nil: null, freq: 3 }) }), {
    maxLength: 2,
  }),
});

export const operations: fc.Arbitrary<Op[]> = fc.array(
  fc.oneof(
    { arbitrary: commitSpec.map((spec) => ({ kind: "commit" as const, spec })), weight: 5 },
    {
      arbitrary: fc
        .record({
          owner: fc.constantFrom("d1", "d2"),
          leaseMs: fc.constantFrom(5, 10, 30),
          limit: fc.integer({ min: 1, max: 3 }),
          inStreamOrder: fc.boolean(),
          categories: fc.option(fc.subarray(CATEGORIES, { minLength: 1 }), { nil: undefined }),
          statuses: fc.option(fc.subarray(STATUSES, { minLength: 1 }), { nil: undefined, freq: 2 }),
        })
        .map((o) => {
          const options: Omit<ClaimOptions, "now"> = {
            owner: o.owner,
            leaseMs: o.leaseMs,
            limit: o.limit,
            inStreamOrder: o.inStreamOrder,
          };
          if (o.categories) options.categories = o.categories;
          if (o.statuses) options.statuses = o.statuses;
          return { kind: "claim" as const, options };
        }),
      weight: 4,
    },
    {
      arbitrary: fc
        .record({ id: fc.constantFrom(...OUTBOX_IDS), owner: fc.constantFrom("d1", "d2"), update })
        .map((u) => ({ kind: "update" as const, ...u })),
      weight: 2,
    },
    {
      arbitrary: fc
        .record({ id: fc.constantFrom(...OUTBOX_IDS), update })
        .map((u) => ({ kind: "force" as const, ...u })),
      weight: 1,
    },
    { arbitrary: fc.nat(20).map((back) => ({ kind: "prune" as const, back })), weight: 1 },
    { arbitrary: fc.nat(20).map((back) => ({ kind: "pruneOutbox" as const, back })), weight: 1 },
    {
      arbitrary: fc
        .record({
          id: fc.constantFrom(...DEAD_IDS),
          status: fc.constantFrom("replayed" as const, "discarded" as const),
        })
        .map((r) => ({ kind: "resolve" as const, ...r })),
      weight: 1,
    },
    { arbitrary: fc.constantFrom(1, 5, 10).map((ms) => ({ kind: "tick" as const, ms })), weight: 3 },
  ),
  { minLength: 1, maxLength: 60 },
);

const withoutSeq = (rows: OutboxRow[]) => rows.map(({ seq: _seq, ...rest }) => rest);
/** A commit's answer with the outbox rows it inserted named by id only (their seq compared by order elsewhere). */
const insertedIds = (result: CommitResult) => ({ ...result, inserted: result.inserted?.map((row) => row.id) });

/** Run an operation and capture its answer, or the class of error it threw. */
async function outcome(work: () => Promise<unknown>): Promise<unknown> {
  try {
    const value = await work();
    return { ok: value };
  } catch (error) {
    return { error: (error as Error).name };
  }
}

function buildCommit(spec: CommitSpec, current: number, now: number, nextEventId: () => string): Commit {
  const expectedVersion =
    spec.expected === "current"
      ? current
      : spec.expected === "stale"
        ? Math.max(0, current - 1) === current
          ? current + 2
          : current - 1
        : spec.expected === "ahead"
          ? current + 1
          : undefined;
  return {
    stream: spec.stream,
    expectedVersion: spec.stream === undefined ? undefined : expectedVersion,
    events:
      spec.stream === undefined
        ? []
        : Array.from({ length: spec.events }, (_, i) => ({ eventId: nextEventId(), type: "T", data: { i, now } })),
    snapshot: spec.snapshot ? { version: current + spec.events, schemaVersion: 1, state: { at: now } } : undefined,
    outbox: spec.outbox.map((o) => ({
      id: o.id,
      category: o.category,
      kind: "k",
      stream: o.stream,
      payload: o.payload,
      notBefore: now + o.delay,
    })),
    outboxDone: spec.outcome
      ? [{ id: spec.outcome.id, outcome: "completed", result: { now } }, ...spec.outboxDone]
      : spec.outboxDone,
    inbox: spec.outcome
      ? {
          consumer: spec.outcome.consumer,
          messageId: `${spec.outcome.id}#outcome`,
          reply: null,
          outcomeOf: spec.outcome.id,
        }
      : spec.inbox,
    checkpoint: spec.checkpoint,
    park: spec.park,
    unpark: spec.unpark,
    deadLetters: spec.deadLetters.map((id) => ({
      id,
      consumer: "k",
      messageId: null,
      payload: { id, now },
      error: "e",
      stack: null,
      attempts: 1,
      firstFailedAt: now,
      lastFailedAt: now,
    })),
    documents: spec.documents.map((d) => ({ collection: "docs", id: d.id, doc: d.doc })),
    now,
  };
}

async function snapshotState(j: Journal): Promise<unknown> {
  const state: Record<string, unknown> = {};
  for (const s of STREAMS) {
    state[`stream ${s}`] = await j.readStream(s);
    state[`version ${s}`] = await j.streamVersion(s);
    state[`snapshot ${s}`] = await j.latestSnapshot(s);
  }
  state.streams = await j.listStreams("s/");
  state.outbox = withoutSeq(await j.listOutbox());
  for (const c of CONSUMERS) for (const m of MESSAGES) state[`inbox ${c} ${m}`] = await j.getInbox(c, m);
  for (const c of ["s/0", "s/1"]) {
    for (const id of OUTBOX_IDS) state[`inbox ${c} ${id}#outcome`] = await j.getInbox(c, `${id}#outcome`);
  }
  for (const s of SOURCES) state[`checkpoint ${s}`] = await j.getCheckpoint("k", s);
  state.parked = await j.listParked("k");
  state.dead = await j.listDeadLetters();
  state.docs = await j.listDocuments("docs");
  return state;
}

/** Apply `ops` to both journals (both freshly migrated and empty) and compare every answer. */
export async function runBoth(reference: Journal, subject: Journal, ops: Op[]): Promise<void> {
  let now = 1_000;
  let eventNo = 0;
  for (const [index, op] of ops.entries()) {
    const answers: unknown[] = [];
    // A commit is built once, from the state before it, and then given to both journals.
    let commit: Commit | undefined;
    if (op.kind === "commit") {
      const current = op.spec.stream === undefined ? 0 : await reference.streamVersion(op.spec.stream);
      commit = buildCommit(op.spec, current, now, () => `ev-${++eventNo}`);
    }
    for (const j of [reference, subject]) {
      switch (op.kind) {
        case "commit":
          answers.push(await outcome(async () => insertedIds(await j.commit(commit as Commit))));
          break;
        case "claim":
          answers.push(await outcome(async () => withoutSeq(await j.claimOutbox({ ...op.options, now }))));
          break;
        case "update":
          answers.push(await outcome(() => j.updateOutbox(op.id, op.owner, op.update, now)));
          break;
        case "force":
          answers.push(await outcome(() => j.forceOutbox(op.id, op.update, now)));
          break;
        case "prune":
          answers.push(await outcome(() => j.pruneInbox(now - op.back)));
          break;
        case "pruneOutbox":
          answers.push(await outcome(() => j.pruneOutbox(now - op.back)));
          break;
        case "resolve":
          answers.push(await outcome(() => j.resolveDeadLetter(op.id, op.status, now)));
          break;
        case "tick":
          answers.push("tick");
          break;
      }
    }
    // Time moves only on ticks, so equal timestamps (lease expiry, prune bounds) happen often.
    if (op.kind === "tick") now += op.ms;
    expect(answers[1], `operation ${index} (${op.kind})`).toEqual(answers[0]);
  }
  expect(await snapshotState(subject)).toEqual(await snapshotState(reference));
}
