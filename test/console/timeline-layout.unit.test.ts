import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildAxis } from "../../src/console/timeline/axis.js";
import {
  arrowBound,
  COLUMN_PX,
  layoutTimeline,
  MAX_BARS_PER_LANE,
  PLOT_LEFT,
  PLOT_RIGHT,
} from "../../src/console/timeline/layout.js";
import type { Story, StoryEffect } from "../../src/console/timeline/story.js";
import { timelineSvg } from "../../src/console/timeline/svg.js";

// The timeline drawing's pure layout: whatever the story, every event, effect and send is drawn
// exactly once (alone or in a counted aggregate), bars run forwards, arrows join lanes that
// exist, and the drawing stays bounded at 2,000 events.

const T0 = Date.UTC(2026, 11, 4, 20, 0, 0);
const COLUMNS = Math.ceil((PLOT_RIGHT - PLOT_LEFT) / COLUMN_PX) + 1;

/** Times in bursts: a few seconds of steps, then a wait of up to two days. */
const time = fc
  .tuple(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 20_000 }))
  .map(([burst, ms]) => T0 + burst * 86_400_000 * 0.7 + ms);

function storyOf(
  lanes: number,
  sizes: { events: number; effects: number; sends: number },
  /** Exactly these sizes (fast-check's default keeps arrays short). */
  exact = false,
): fc.Arbitrary<Story> {
  const size = (max: number) => ({ maxLength: max, ...(exact ? { minLength: max } : { size: "max" as const }) });
  const lane = fc.integer({ min: 0, max: lanes - 1 });
  const effect = fc
    .record({
      lane,
      start: time,
      length: fc.option(fc.integer({ min: 0, max: 60_000 }), { nil: null }),
      unknown: fc.option(fc.integer({ min: 0, max: 60_000 }), { nil: null }),
      status: fc.constantFrom("Pending", "Unknown", "Completed", "Failed"),
      settled: fc.boolean(),
      kind: fc.constantFrom("payment", "email", "picklist", "oncely.timer"),
      attempts: fc.integer({ min: 0, max: 4 }),
    })
    .map(
      (e): Omit<StoryEffect, "key"> => ({
        lane: e.lane,
        kind: e.kind,
        status: e.status,
        requestedAt: e.start,
        endedAt: e.length === null ? null : e.start + e.length,
        attempts: e.attempts,
        lookups: e.length === null ? 2 : null,
        unknownAt: e.unknown === null ? null : e.start + e.unknown,
        reconcileAt: e.unknown === null ? null : e.start + e.unknown + 5,
        unknownAttempts: e.unknown === null ? [] : [{ attempt: 1, at: e.start + e.unknown }],
        settlements: e.settled ? [{ at: e.start + 10, by: "ada", outcome: "succeeded", note: null }] : [],
        outcome: e.length === null ? null : "completed",
        lastError: null,
      }),
    );
  return fc
    .record({
      events: fc.array(fc.record({ lane, at: time, type: fc.constantFrom("OrderPlaced", "PaymentNoted", "Shipped") }), {
        ...size(sizes.events),
      }),
      effects: fc.array(effect, size(sizes.effects)),
      sends: fc.array(
        fc.record({
          from: lane,
          at: time,
          category: fc.constantFrom("message" as const, "event" as const),
          arrivals: fc.uniqueArray(fc.record({ lane, delay: fc.integer({ min: 0, max: 500 }) }), {
            maxLength: 3,
            selector: (a) => a.lane,
          }),
        }),
        size(sizes.sends),
      ),
      parked: fc.array(fc.record({ lane, at: time, consumer: fc.constantFrom("payment", "views") }), { maxLength: 5 }),
      dead: fc.array(fc.record({ lane, at: time }), { maxLength: 20 }),
      now: time,
    })
    .map((s) => ({
      lanes: Array.from({ length: lanes }, (_, i) => `actor-${i}/ord_1`),
      events: s.events.map((e, i) => ({
        id: `e${i}`,
        lane: e.lane,
        at: e.at,
        type: e.type,
        version: i + 1,
        causedBy: null,
      })),
      effects: s.effects.map((e, i) => ({ ...e, key: `k${i}` })),
      sends: s.sends.map((m, i) => ({
        id: `m${i}`,
        category: m.category,
        kind: "shipment",
        from: m.from,
        sentAt: m.at,
        arrivals: m.arrivals.map((a) => ({ lane: a.lane, at: m.at + a.delay })),
        status: "done",
        to: null,
      })),
      parked: s.parked.map((p, i) => ({ ...p, source: "ordering/ord_1", version: i + 2 })),
      deadLetters: s.dead.map((d, i) => ({ id: `d${i}`, ...d, consumer: "payment", error: "boom", status: "open" })),
      now: Math.max(s.now, ...s.events.map((e) => e.at)),
    }));
}

const sorted = (xs: readonly string[]) => [...xs].sort();

describe("the timeline layout", () => {
  it("draws every event, effect and send exactly once, bars forwards, arrows between existing lanes", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }).chain((lanes) => storyOf(lanes, { events: 300, effects: 80, sends: 120 })),
        (story) => {
          const layout = layoutTimeline(story);
          expect(sorted(layout.marks.flatMap((m) => m.ids))).toEqual(sorted(story.events.map((e) => e.id)));
          expect(sorted([...layout.bars.map((b) => b.key), ...layout.bundles.flatMap((b) => b.keys)])).toEqual(
            sorted(story.effects.map((e) => e.key)),
          );
          expect(sorted(layout.arrows.flatMap((a) => a.ids))).toEqual(
            sorted(story.sends.flatMap((s) => (s.arrivals.length === 0 ? [s.id] : s.arrivals.map(() => s.id)))),
          );
          expect(sorted(layout.dead.flatMap((d) => d.ids))).toEqual(sorted(story.deadLetters.map((d) => d.id)));
          expect(layout.parked.reduce((sum, p) => sum + p.count, 0)).toBe(story.parked.length);
          for (const b of layout.bars) {
            expect(b.x1).toBeLessThan(b.x2);
            expect(b.x1).toBeGreaterThanOrEqual(PLOT_LEFT);
            expect(b.x2).toBeLessThanOrEqual(PLOT_RIGHT);
            if (b.unknown) expect(b.unknown.x1).toBeLessThanOrEqual(b.unknown.x2);
            for (const s of b.settlements) expect(s.x >= b.x1 && s.x <= b.x2).toBe(true);
          }
          for (const p of layout.parked) expect(p.x1).toBeLessThan(p.x2);
          const laneIndexes = new Set(layout.lanes.map((l) => l.index));
          expect(layout.lanes.map((l) => l.stream)).toEqual(story.lanes);
          for (const a of layout.arrows) {
            expect(laneIndexes.has(a.from)).toBe(true);
            expect(a.y1).toBe(layout.lanes[a.from]?.markY);
            if (a.to !== null) {
              expect(laneIndexes.has(a.to)).toBe(true);
              expect(a.y2).toBe(layout.lanes[a.to]?.markY);
            }
          }
          for (const m of layout.marks) {
            expect(m.x).toBeGreaterThanOrEqual(PLOT_LEFT);
            expect(m.x).toBeLessThanOrEqual(PLOT_RIGHT);
          }
        },
      ),
      { numRuns: 60, endOnFailure: true },
    );
  });

  it("stays bounded at 2,000 events: marks per lane column, bars per lane, arrows, and the SVG's size", () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 20 })
          .chain((lanes) => storyOf(lanes, { events: 2_000, effects: 600, sends: 2_000 }, true)),
        (story) => {
          const layout = layoutTimeline(story);
          const lanes = layout.lanes.length;
          expect(layout.marks.length).toBeLessThanOrEqual(lanes * COLUMNS);
          expect(layout.dead.length).toBeLessThanOrEqual(lanes * COLUMNS);
          expect(layout.arrows.length).toBeLessThanOrEqual(arrowBound(lanes));
          for (let lane = 0; lane < lanes; lane++) {
            expect(layout.bars.filter((b) => b.lane === lane).length).toBeLessThanOrEqual(MAX_BARS_PER_LANE);
            expect(layout.bundles.filter((b) => b.lane === lane).length).toBeLessThanOrEqual(COLUMNS);
          }
          expect(layout.height).toBeLessThanOrEqual(40 + lanes * 120);
          // Each drawn thing costs at most ~1 kB of markup (its hover text is clipped).
          const drawn =
            layout.marks.length +
            layout.dead.length +
            layout.arrows.length +
            layout.bars.length * 6 +
            layout.bundles.length;
          expect(timelineSvg(layout).text.length).toBeLessThan(20_000 + drawn * 1_000);
          expect(drawn).toBeLessThan(20 * (COLUMNS * 2 + MAX_BARS_PER_LANE * 6) + arrowBound(20));
        },
      ),
      { numRuns: 5, endOnFailure: true },
    );
  });

  it("aggregates 2,000 events crowded into one lane into counted marks", () => {
    const story: Story = {
      lanes: ["order/o-1", "payment/o-1"],
      events: Array.from({ length: 2_000 }, (_, i) => ({
        id: `e${i}`,
        lane: 0,
        at: T0 + i * 7,
        type: i % 2 ? "Noted" : "Placed",
        version: i + 1,
        causedBy: null,
      })),
      effects: [],
      sends: [],
      parked: [],
      deadLetters: [],
      now: T0 + 14_000,
    };
    const layout = layoutTimeline(story);
    expect(layout.marks.length).toBeLessThanOrEqual(COLUMNS);
    expect(layout.marks.some((m) => m.ids.length > 1 && /^\d+ events from /.test(m.title))).toBe(true);
    expect(layout.marks.reduce((s, m) => s + m.ids.length, 0)).toBe(2_000);
  });

  it("refuses a story that names a lane it does not have", () => {
    const story: Story = {
      lanes: ["order/o-1"],
      events: [],
      effects: [],
      sends: [
        {
          id: "m1",
          category: "message",
          kind: "x",
          from: 0,
          sentAt: T0,
          arrivals: [{ lane: 3, at: T0 }],
          status: "done",
          to: null,
        },
      ],
      parked: [],
      deadLetters: [],
      now: T0,
    };
    expect(() => layoutTimeline(story)).toThrow(/lane out of range \(1 lanes\) for send m1/);
  });
});

describe("the timeline axis", () => {
  it("is monotone and inside the plot, and cuts long idle gaps out", () => {
    fc.assert(
      fc.property(
        fc.array(time, { minLength: 1, maxLength: 200 }),
        fc.array(time, { maxLength: 20 }),
        (times, probes) => {
          const axis = buildAxis(times, PLOT_LEFT, PLOT_RIGHT);
          const all = [...times, ...probes].sort((a, b) => a - b);
          for (let i = 1; i < all.length; i++)
            expect(axis.x(all[i] as number)).toBeGreaterThanOrEqual(axis.x(all[i - 1] as number) - 1e-9);
          for (const t of all) {
            expect(axis.x(t)).toBeGreaterThanOrEqual(PLOT_LEFT);
            expect(axis.x(t)).toBeLessThanOrEqual(PLOT_RIGHT + 1e-9);
          }
          for (const t of axis.ticks) expect(t.x >= PLOT_LEFT && t.x <= PLOT_RIGHT + 1e-9).toBe(true);
        },
      ),
    );
  });

  it("gives a burst of seconds most of the width when the next step came a day later", () => {
    const burst = Array.from({ length: 10 }, (_, i) => T0 + i * 1_000);
    const axis = buildAxis([...burst, T0 + 86_400_000], PLOT_LEFT, PLOT_RIGHT);
    expect(axis.breaks).toHaveLength(1);
    expect(axis.breaks[0]?.ms).toBe(86_400_000 - 9_000);
    expect(axis.x(T0 + 9_000) - axis.x(T0)).toBeGreaterThan((PLOT_RIGHT - PLOT_LEFT) / 2);
  });
});
