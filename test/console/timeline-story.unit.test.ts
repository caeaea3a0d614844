import { describe, expect, it } from "vitest";
import type { OperatorAction } from "../../src/console/audit.js";
import { layoutTimeline } from "../../src/console/timeline/layout.js";
import { type ActorRecords, buildStory } from "../../src/console/timeline/story.js";
import { timelineSvg } from "../../src/console/timeline/svg.js";
import type { EventRecord, OutboxRow } from "../../src/journal/types.js";

// The story the timeline draws, joined from the ids the journal keeps: causation ids make arrows
// and mark an effect's Unknown attempts, reconciliation and outcome; settle actions, dead letters
// and parked messages land on the lane that wrote the message they concern.

const T0 = Date.UTC(2026, 11, 4, 20, 0, 0);

function event(stream: string, version: number, at: number, type: string, causationId: string | null): EventRecord {
  return {
    eventId: `${stream}#${version}`,
    stream,
    version,
    type,
    data: { type },
    causationId,
    correlationId: null,
    recordedAt: at,
    schemaVersion: 1,
  };
}

function row(over: Partial<OutboxRow> & Pick<OutboxRow, "id" | "category" | "stream">): OutboxRow {
  return {
    kind: "k",
    payload: {},
    notBefore: T0,
    status: "done",
    attempts: 1,
    leaseOwner: null,
    leaseUntil: null,
    lastError: null,
    outcome: "completed",
    result: null,
    createdAt: T0,
    updatedAt: T0,
    seq: 1,
    ...over,
  };
}

const KEY = "order:o1:payment";
const actors: ActorRecords[] = [
  {
    stream: "order/o1",
    events: [event("order/o1", 1, T0, "OrderPlaced", null)],
    effects: [],
    messages: [],
    published: [
      row({
        id: "order:o1:placed",
        category: "event",
        stream: "order/o1",
        kind: "OrderPlaced",
        outcome: "published",
        payload: { source: "ordering", aggregateId: "o1" },
      }),
    ],
  },
  {
    stream: "payment/o1",
    events: [
      event("payment/o1", 1, T0 + 50, "PaymentRequested", "order:o1:placed"),
      event("payment/o1", 2, T0 + 400, "PaymentUnknown", `${KEY}#unknown:1`),
      event("payment/o1", 3, T0 + 5_000, "PaymentNeedsReconciliation", `${KEY}#reconcile`),
      event("payment/o1", 4, T0 + 60_000, "PaymentCompleted", `${KEY}#outcome`),
    ],
    effects: [
      row({
        id: KEY,
        category: "effect",
        stream: "payment/o1",
        kind: "payment",
        createdAt: T0 + 50,
        updatedAt: T0 + 60_000,
      }),
    ],
    messages: [
      row({
        id: "payment:o1:ship",
        category: "message",
        stream: "payment/o1",
        kind: "shipment",
        outcome: "delivered",
        updatedAt: T0 + 61_000,
        payload: { to: "shipment/o1" },
      }),
    ],
    published: [],
  },
  { stream: "shipment/o1", events: [], effects: [], messages: [], published: [] },
];
const settle: OperatorAction = {
  id: "a1",
  at: T0 + 59_000,
  by: "ada",
  action: "settle",
  target: KEY,
  outcome: "succeeded",
  note: "ledger",
};

describe("the timeline's story", () => {
  const story = buildStory({
    actors,
    actions: [settle, { ...settle, id: "a2", target: "other" }],
    deadLetters: [
      {
        id: "d1",
        consumer: "views",
        messageId: "order:o1:placed",
        payload: null,
        error: "boom",
        stack: null,
        attempts: 3,
        firstFailedAt: T0 + 10,
        lastFailedAt: T0 + 20,
        status: "open",
        resolvedAt: null,
      },
      {
        id: "d2",
        consumer: "views",
        messageId: "elsewhere",
        payload: null,
        error: "boom",
        stack: null,
        attempts: 3,
        firstFailedAt: T0,
        lastFailedAt: T0,
        status: "open",
        resolvedAt: null,
      },
    ],
    parked: [
      { consumer: "billing", source: "ordering/o1", version: 3, message: { eventId: "unknown" }, parkedAt: T0 + 30 },
    ],
    now: T0 + 120_000,
  });

  it("draws an integration event from its publisher to the actor its causation names, and a delivered message to its target", () => {
    expect(story.sends.find((s) => s.id === "order:o1:placed")).toMatchObject({
      from: 0,
      arrivals: [{ lane: 1, at: T0 + 50 }],
    });
    // No event was caused by the message: it arrived when it was acknowledged.
    expect(story.sends.find((s) => s.id === "payment:o1:ship")).toMatchObject({
      from: 1,
      arrivals: [{ lane: 2, at: T0 + 61_000 }],
    });
  });

  it("gives the effect its Unknown attempt, its reconciliation, the operator's settlement and its outcome", () => {
    expect(story.effects).toEqual([
      expect.objectContaining({
        key: KEY,
        lane: 1,
        requestedAt: T0 + 50,
        endedAt: T0 + 60_000,
        unknownAt: T0 + 400,
        reconcileAt: T0 + 5_000,
        unknownAttempts: [{ attempt: 1, at: T0 + 400 }],
        settlements: [{ at: T0 + 59_000, by: "ada", outcome: "succeeded", note: "ledger" }],
      }),
    ]);
  });

  it("puts a dead letter and a parked message on the lane that published what they wait on, and leaves out the others", () => {
    expect(story.deadLetters).toEqual([expect.objectContaining({ id: "d1", lane: 0 })]);
    expect(story.parked).toEqual([expect.objectContaining({ consumer: "billing", lane: 0 })]);
  });

  it("renders as SVG with a lane per actor, the bar with its Unknown span and settlement, and arrows", () => {
    const svg = timelineSvg(layoutTimeline(story)).text;
    expect(svg.match(/<g class="tl-lane"/g)).toHaveLength(3);
    expect(svg).toContain(`<g class="tl-effect" data-key="${KEY}">`);
    expect(svg).toContain('class="tl-unknown"');
    expect(svg).toContain('class="tl-settle"');
    expect(svg).toContain("settled succeeded by ada");
    expect(svg.match(/class="tl-arrow /g)?.length).toBe(2);
  });

  it("escapes every name it draws", () => {
    const evil = `<img src=x onerror=alert(1)>"`;
    const hostile = buildStory({
      actors: [{ ...(actors[1] as ActorRecords), stream: evil, events: [event(evil, 1, T0, evil, evil)] }],
      actions: [{ ...settle, by: evil }],
      deadLetters: [],
      parked: [],
      now: T0,
    });
    const svg = timelineSvg(layoutTimeline(hostile)).text;
    expect(svg).not.toContain("<img");
    expect(svg).toContain("&lt;img src=x onerror=alert(1)&gt;&quot;");
  });
});
