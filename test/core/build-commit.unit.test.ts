import { describe, expect, it } from "vitest";
import { buildCommit, type CommitInput } from "../../src/core/build-commit.js";
import { sequentialIds } from "../../src/core/clock.js";
import type { EffectOutcome, Typed } from "../../src/core/decider.js";
import { commandPrint, readHeld } from "../../src/core/held-command.js";
import { fenceCheckpoint } from "../../src/core/slices.js";
import { type CounterState, counter } from "./fixtures/counter.js";

const added = (amount: number): Typed => ({ type: "Added", amount }) as Typed;

/** A decision on a counter at version 3, with nothing injected that a test did not set. */
const input = (over: Partial<CommitInput> = {}): CommitInput => ({
  definition: counter,
  address: "counter/a",
  state: { total: 6, history: [1, 2, 3], notified: false } satisfies CounterState,
  version: 3,
  decision: { events: [added(4)], reply: 10 },
  messageId: "m-1",
  options: { correlationId: "corr-1" },
  outcome: undefined,
  print: undefined,
  now: 1_000,
  ids: sequentialIds("e"),
  trace: undefined,
  fence: undefined,
  counters: undefined,
  ...over,
});

describe("buildCommit: a decision as its one commit, pure", () => {
  it("appends the events at the held version, with injected ids, and evolves the next state", () => {
    const held = input();
    const before = structuredClone(held.state);
    const { commit, nextState } = buildCommit(held);
    expect(commit).toMatchObject({ stream: "counter/a", expectedVersion: 3, now: 1_000 });
    expect(commit.events).toEqual([
      {
        eventId: "e-1",
        type: "Added",
        data: { type: "Added", amount: 4 },
        causationId: "m-1",
        correlationId: "corr-1",
        schemaVersion: 1,
      },
    ]);
    expect(nextState).toEqual({ total: 10, history: [1, 2, 3, 4], notified: false });
    expect(held.state).toEqual(before);
    // Same input, same commit: nothing read from a clock, a span or a random source.
    expect(buildCommit(input())).toEqual(buildCommit(input()));
  });

  it("records the command in the inbox, with its print when it has one", () => {
    expect(buildCommit(input()).commit.inbox).toEqual({
      consumer: "counter/a",
      messageId: "m-1",
      reply: 10,
      outcomeOf: undefined,
    });
    const print = commandPrint(added(4), "m-1");
    const held = buildCommit(input({ print })).commit.inbox?.reply;
    expect(readHeld(held)).toEqual({ print, reply: 10 });
    expect(buildCommit(input({ messageId: undefined })).commit.inbox).toBeUndefined();
  });

  it("turns effects, messages and published events into outbox rows carrying the trace", () => {
    const trace = { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" };
    const { commit } = buildCommit(
      input({
        trace,
        options: { causationId: "ignored: the message id is the cause", correlationId: "corr-1" },
        decision: {
          effects: [
            { kind: "notify", key: "k-now", input: { total: 6 } },
            { kind: "notify", key: "k-later", input: { total: 6 }, inputVersion: 2, notBefore: 5_000 },
          ],
          send: [{ id: "msg-1", to: "warehouse/w1", command: { type: "Pick" } }],
          publish: [{ eventId: "pub-1", type: "Counted", source: "counting", aggregateId: "a", payload: { n: 1 } }],
        },
      }),
    );
    expect(commit.outbox).toEqual([
      {
        id: "k-now",
        category: "effect",
        kind: "notify",
        stream: "counter/a",
        payload: { input: { total: 6 }, correlationId: "corr-1", trace },
        notBefore: 1_000,
      },
      {
        id: "k-later",
        category: "effect",
        kind: "notify",
        stream: "counter/a",
        payload: { input: { total: 6 }, inputVersion: 2, correlationId: "corr-1", trace },
        notBefore: 5_000,
      },
      {
        id: "msg-1",
        category: "message",
        kind: "warehouse",
        stream: "counter/a",
        payload: { to: "warehouse/w1", command: { type: "Pick" }, correlationId: "corr-1", trace },
        notBefore: 1_000,
      },
      {
        id: "pub-1",
        category: "event",
        kind: "Counted",
        stream: "counter/a",
        payload: {
          eventId: "pub-1",
          type: "Counted",
          source: "counting",
          aggregateId: "a",
          occurredAt: new Date(1_000).toISOString(),
          correlationId: "corr-1",
          causationId: "m-1",
          payload: { n: 1 },
          ...trace,
        },
        notBefore: 1_000,
      },
    ]);
    expect(commit.events).toEqual([]);
  });

  it("marks the outbox row of a final outcome done in the same commit; its row is the inbox record", () => {
    const outcome: EffectOutcome = {
      type: "oncely.effect.succeeded",
      key: "counter:a:notify",
      kind: "notify",
      input: null,
      result: { sent: true },
      attempt: 1,
      via: "run",
    };
    const { commit } = buildCommit(input({ outcome, messageId: "counter:a:notify#outcome", decision: {} }));
    expect(commit.outboxDone).toEqual([{ id: "counter:a:notify", outcome: "completed", result: { sent: true } }]);
    expect(commit.inbox?.outcomeOf).toBe("counter:a:notify");
    // A reply to keep: the inbox row keeps it, the done row does not stand for it.
    const replied = buildCommit(input({ outcome, messageId: "counter:a:notify#outcome", decision: { reply: 1 } }));
    expect(replied.commit.inbox?.outcomeOf).toBeUndefined();
    // Not final: nothing is done.
    const unknown: EffectOutcome = { type: "oncely.effect.unknown", key: "k", kind: "notify", error: "?", attempt: 1 };
    expect(buildCommit(input({ outcome: unknown })).commit.outboxDone).toBeUndefined();
  });

  it("snapshots the next state under the next version when the commit crosses a multiple of `every`", () => {
    // counter snapshots every 5: 3 → 5 crosses it, 3 → 4 does not.
    const two = { events: [added(1), added(2)] };
    const { commit, nextState } = buildCommit(input({ decision: two }));
    expect(commit.snapshot).toEqual({ version: 5, schemaVersion: 1, state: nextState });
    expect(buildCommit(input()).commit.snapshot).toBeUndefined();
    expect(buildCommit(input({ decision: {} })).commit.snapshot).toBeUndefined();
  });

  it("carries the slice's fence first, then the published-version counters; neither: no checkpoints", () => {
    const counter1 = { consumer: "oncely/published-versions", source: "counting/a", version: 2, expected: 1 };
    const { commit } = buildCommit(input({ fence: { slice: 3, token: 7 }, counters: [counter1] }));
    expect(commit.checkpoints).toEqual([fenceCheckpoint(3, 7), counter1]);
    expect(buildCommit(input({ fence: { slice: 3, token: 7 } })).commit.checkpoints).toEqual([fenceCheckpoint(3, 7)]);
    expect(buildCommit(input({ counters: [counter1] })).commit.checkpoints).toEqual([counter1]);
    expect("checkpoints" in buildCommit(input({ counters: [] })).commit).toBe(false);
  });
});
