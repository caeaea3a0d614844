import { age, isoTime } from "../html.js";
import { type Axis, type AxisBreak, buildAxis, type Tick } from "./axis.js";
import type { Story, StoryEffect, StorySend } from "./story.js";

/**
 * Where everything of a story goes in the drawing, in pixels: one lane per actor, time left to
 * right (`axis.ts`). Pure and bounded whatever the story's size: events falling in one column of
 * a lane are one mark with their count, a lane draws at most `MAX_BARS_PER_LANE` effect bars in
 * `MAX_BAR_ROWS` rows and bundles the rest per column, and arrows between the same lanes in
 * nearby columns merge until at most `MAX_ARROWS` remain. Every event, effect and send of the
 * story is in exactly one mark, bar, bundle or arrow (`ids`/`keys` say which).
 */

export const WIDTH = 1200;
export const PLOT_LEFT = 230;
export const PLOT_RIGHT = 1185;
/** Events closer than this in one lane are one mark (px). */
export const COLUMN_PX = 8;
export const MAX_BAR_ROWS = 5;
export const MAX_BARS_PER_LANE = 40;
export const MAX_ARROWS = 400;

/** Most arrows a layout of this many lanes holds. */
export const arrowBound = (lanes: number) => Math.max(MAX_ARROWS, 2 * lanes * (lanes + 1));
const AXIS_TOP = 34;
const MARK_ROW = 30;
const BAR_ROW = 13;
const BAR_HEIGHT = 9;
const LANE_PAD = 8;
const MIN_BAR_PX = 3;
const STUB_PX = 9;
/** Longest hover text (characters): a title is a summary, the tables below hold the detail. */
const TITLE_MAX = 600;

export interface LaneBox {
  index: number;
  stream: string;
  y: number;
  height: number;
  /** Where the lane's events sit, and where arrows start and end. */
  markY: number;
}

export interface EventMark {
  lane: number;
  x: number;
  y: number;
  /** The events this mark stands for: one, or an aggregate of several. */
  ids: string[];
  title: string;
}

export interface EffectBar {
  key: string;
  lane: number;
  x1: number;
  x2: number;
  y: number;
  height: number;
  status: string;
  /** Still open: its right end is now. */
  open: boolean;
  unknown: { x1: number; x2: number; title: string } | null;
  reconcile: { x: number; title: string } | null;
  attempts: { x: number; title: string }[];
  settlements: { x: number; title: string }[];
  /** Drawn inside the bar when it is wide enough. */
  label: string | null;
  title: string;
}

export interface EffectBundle {
  lane: number;
  x: number;
  y: number;
  keys: string[];
  title: string;
}

export interface ArrowMark {
  from: number;
  /** Null: a stub, nothing in this story handled it. */
  to: number | null;
  category: "message" | "event";
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  /** Send ids (a send handled by two lanes has an arrow to each). */
  ids: string[];
  title: string;
}

export interface ParkedSpan {
  lane: number;
  x1: number;
  x2: number;
  y: number;
  count: number;
  title: string;
}

export interface DeadMark {
  lane: number;
  x: number;
  y: number;
  ids: string[];
  title: string;
}

export interface TimelineLayout {
  width: number;
  height: number;
  plot: { left: number; right: number; top: number; bottom: number };
  ticks: Tick[];
  breaks: AxisBreak[];
  from: number;
  to: number;
  lanes: LaneBox[];
  marks: EventMark[];
  bars: EffectBar[];
  bundles: EffectBundle[];
  arrows: ArrowMark[];
  parked: ParkedSpan[];
  dead: DeadMark[];
}

export function layoutTimeline(story: Story): TimelineLayout {
  checkLanes(story);
  const axis = buildAxis(timesOf(story), PLOT_LEFT, PLOT_RIGHT);
  const column = (x: number) => Math.floor((x - PLOT_LEFT) / COLUMN_PX);

  // Bars first: they decide each lane's height.
  const placed = story.lanes.map((_, lane) =>
    packEffects(
      story.effects.filter((e) => e.lane === lane),
      axis,
      story.now,
    ),
  );
  const lanes: LaneBox[] = [];
  let y = AXIS_TOP;
  story.lanes.forEach((stream, index) => {
    const p = placed[index] as Packed;
    const rows = p.rows + (p.overflow.length > 0 ? 1 : 0);
    const height = MARK_ROW + rows * BAR_ROW + LANE_PAD;
    lanes.push({ index, stream, y, height, markY: y + MARK_ROW / 2 + 2 });
    y += height;
  });
  const barTop = (lane: number, row: number) => (lanes[lane] as LaneBox).y + MARK_ROW + row * BAR_ROW;

  const bars: EffectBar[] = [];
  const bundles: EffectBundle[] = [];
  placed.forEach((p, lane) => {
    for (const b of p.bars) bars.push(barOf(b.effect, b.x1, b.x2, barTop(lane, b.row), axis, story.now));
    for (const group of groupBy(p.overflow, (o) => String(column(o.x1)))) {
      const x = mean(group.map((o) => o.x1));
      const keys = group.map((o) => o.effect.key);
      const counts = countsOf(group.map((o) => `${o.effect.status} ${o.effect.kind}`));
      bundles.push({
        lane,
        x,
        y: barTop(lane, p.rows) + BAR_HEIGHT / 2,
        keys,
        title: clip(`${keys.length} more effect(s) requested here (no room to draw each): ${counts}`),
      });
    }
  });

  const marks: EventMark[] = [];
  for (const group of groupBy(story.events, (e) => `${e.lane}|${column(axis.x(e.at))}`)) {
    const first = group[0] as Story["events"][number];
    const lane = lanes[first.lane] as LaneBox;
    const x = mean(group.map((e) => axis.x(e.at)));
    const title =
      group.length === 1
        ? `${first.type} (#${first.version}) at ${isoTime(first.at)}${first.causedBy ? `; caused by ${first.causedBy}` : ""}`
        : `${group.length} events from ${isoTime(Math.min(...group.map((e) => e.at)))} to ${isoTime(Math.max(...group.map((e) => e.at)))}: ${countsOf(group.map((e) => e.type))}`;
    marks.push({ lane: first.lane, x, y: lane.markY, ids: group.map((e) => e.id), title: clip(title) });
  }

  const dead: DeadMark[] = [];
  for (const group of groupBy(story.deadLetters, (d) => `${d.lane}|${column(axis.x(d.at))}`)) {
    const first = group[0] as Story["deadLetters"][number];
    const lane = lanes[first.lane] as LaneBox;
    dead.push({
      lane: first.lane,
      x: mean(group.map((d) => axis.x(d.at))),
      y: lane.markY - 10,
      ids: group.map((d) => d.id),
      title: clip(
        `${group.length} dead letter(s): ${group
          .slice(0, 3)
          .map((d) => `${d.consumer} (${d.status}) at ${isoTime(d.at)}: ${d.error}`)
          .join("; ")}${group.length > 3 ? "; ..." : ""}`,
      ),
    });
  }

  const parked: ParkedSpan[] = [];
  for (const group of groupBy(story.parked, (p) => `${p.lane}|${p.consumer}`)) {
    const first = group[0] as Story["parked"][number];
    const lane = lanes[first.lane] as LaneBox;
    const since = Math.min(...group.map((p) => p.at));
    const [x1, x2] = span(axis.x(since), axis.x(story.now));
    const versions = group.map((p) => `${p.source}@${p.version}`);
    parked.push({
      lane: first.lane,
      x1,
      x2,
      y: lane.markY + 7,
      count: group.length,
      title: clip(
        `${group.length} message(s) parked by ${first.consumer} since ${isoTime(since)}, waiting for a gap: ${versions.slice(0, 8).join(", ")}${versions.length > 8 ? ", ..." : ""}`,
      ),
    });
  }

  return {
    width: WIDTH,
    height: y + LANE_PAD,
    plot: { left: PLOT_LEFT, right: PLOT_RIGHT, top: AXIS_TOP, bottom: y },
    ticks: axis.ticks,
    breaks: axis.breaks,
    from: axis.from,
    to: axis.to,
    lanes,
    marks,
    bars,
    bundles,
    arrows: arrowsOf(story, lanes, axis),
    parked,
    dead,
  };
}

function checkLanes(story: Story): void {
  const n = story.lanes.length;
  const bad = (lane: number) => !Number.isInteger(lane) || lane < 0 || lane >= n;
  const wrong = [
    ...story.events.filter((e) => bad(e.lane)).map((e) => `event ${e.id}`),
    ...story.effects.filter((e) => bad(e.lane)).map((e) => `effect ${e.key}`),
    ...story.sends.filter((s) => bad(s.from) || s.arrivals.some((a) => bad(a.lane))).map((s) => `send ${s.id}`),
    ...story.parked.filter((p) => bad(p.lane)).map((p) => `parked ${p.source}@${p.version}`),
    ...story.deadLetters.filter((d) => bad(d.lane)).map((d) => `dead letter ${d.id}`),
  ];
  if (wrong.length > 0)
    throw new RangeError(`timeline: lane out of range (${n} lanes) for ${wrong.slice(0, 5).join(", ")}`);
}

/** Every time the drawing places something at; now only when something is still open. */
function timesOf(story: Story): number[] {
  const times: number[] = [];
  for (const e of story.events) times.push(e.at);
  let open = story.parked.length > 0;
  for (const e of story.effects) {
    times.push(e.requestedAt);
    if (e.endedAt === null) open = true;
    else times.push(e.endedAt);
    if (e.unknownAt !== null) times.push(e.unknownAt);
    if (e.reconcileAt !== null) times.push(e.reconcileAt);
    for (const u of e.unknownAttempts) times.push(u.at);
    for (const s of e.settlements) times.push(s.at);
  }
  for (const s of story.sends) {
    times.push(s.sentAt);
    for (const a of s.arrivals) times.push(a.at);
  }
  for (const p of story.parked) times.push(p.at);
  for (const d of story.deadLetters) times.push(d.at);
  if (open || times.length === 0) times.push(story.now);
  return times;
}

interface Packed {
  rows: number;
  bars: { effect: StoryEffect; x1: number; x2: number; row: number }[];
  overflow: { effect: StoryEffect; x1: number }[];
}

/** A bar's ends: at least `MIN_BAR_PX` wide, inside the plot, start before end. */
function span(a: number, b: number): [number, number] {
  const x1 = Math.min(a, PLOT_RIGHT - MIN_BAR_PX);
  return [x1, Math.max(b, x1 + MIN_BAR_PX)];
}

const endOf = (e: StoryEffect, now: number) => e.endedAt ?? Math.max(now, e.requestedAt);

/** What needs an operator's eye is drawn first: anything not simply Completed. */
const notable = (e: StoryEffect) =>
  e.status !== "Completed" || e.unknownAt !== null || e.reconcileAt !== null || e.settlements.length > 0;

function packEffects(effects: StoryEffect[], axis: Axis, now: number): Packed {
  const order = [...effects].sort(
    (a, b) => Number(notable(b)) - Number(notable(a)) || a.requestedAt - b.requestedAt || (a.key < b.key ? -1 : 1),
  );
  const rows: [number, number][][] = [];
  const bars: Packed["bars"] = [];
  const overflow: Packed["overflow"] = [];
  for (const effect of order) {
    const [x1, x2] = span(axis.x(effect.requestedAt), axis.x(endOf(effect, now)));
    let row = -1;
    if (bars.length < MAX_BARS_PER_LANE) {
      row = rows.findIndex((r) => r.every(([a, b]) => x2 + 1 < a || x1 > b + 1));
      if (row < 0 && rows.length < MAX_BAR_ROWS) row = rows.push([]) - 1;
    }
    if (row < 0) overflow.push({ effect, x1 });
    else {
      (rows[row] as [number, number][]).push([x1, x2]);
      bars.push({ effect, x1, x2, row });
    }
  }
  return { rows: rows.length, bars, overflow };
}

function barOf(e: StoryEffect, x1: number, x2: number, top: number, axis: Axis, now: number): EffectBar {
  const at = (t: number) => Math.min(x2, Math.max(x1, axis.x(t)));
  const unknown =
    e.unknownAt === null
      ? null
      : {
          x1: at(e.unknownAt),
          x2,
          title: clip(
            `${e.key} Unknown from ${isoTime(e.unknownAt)} ${e.endedAt === null ? `until now (${age(now - e.unknownAt)})` : `to ${isoTime(e.endedAt)} (${age(e.endedAt - e.unknownAt)})`}${e.lookups === null ? "" : `; lookups so far: ${e.lookups}`}`,
          ),
        };
  const parts = [
    `${e.kind} effect ${e.key}: ${e.status}`,
    `requested ${isoTime(e.requestedAt)}`,
    e.endedAt === null ? "still open" : `outcome ${e.outcome ?? "recorded"} at ${isoTime(e.endedAt)}`,
    `attempts ${e.attempts}`,
    e.lookups === null ? null : `lookups ${e.lookups}`,
    e.unknownAt === null ? null : `went Unknown at ${isoTime(e.unknownAt)}`,
    e.reconcileAt === null ? null : `in the reconciliation queue from ${isoTime(e.reconcileAt)}`,
    ...e.settlements.map((s) => `settled ${s.outcome} by ${s.by} at ${isoTime(s.at)}`),
    e.lastError ? `last error: ${e.lastError}` : null,
  ];
  return {
    key: e.key,
    lane: e.lane,
    x1,
    x2,
    y: top,
    height: BAR_HEIGHT,
    status: e.status,
    open: e.endedAt === null,
    unknown,
    reconcile:
      e.reconcileAt === null
        ? null
        : { x: at(e.reconcileAt), title: `${e.key} sent to the reconciliation queue at ${isoTime(e.reconcileAt)}` },
    attempts: e.unknownAttempts.map((u) => ({
      x: at(u.at),
      title: `${e.key} attempt ${u.attempt}: outcome Unknown (recorded ${isoTime(u.at)})`,
    })),
    settlements: e.settlements.map((s) => ({
      x: at(s.at),
      title: clip(`${e.key} settled ${s.outcome} by ${s.by} at ${isoTime(s.at)}${s.note ? `: ${s.note}` : ""}`),
    })),
    label: x2 - x1 > 8 * (e.kind.length + 4) ? `${e.kind}${e.attempts > 1 ? ` ×${e.attempts}` : ""}` : null,
    title: clip(parts.filter((p) => p !== null).join("; ")),
  };
}

function arrowsOf(story: Story, lanes: LaneBox[], axis: Axis): ArrowMark[] {
  interface One {
    send: StorySend;
    to: number | null;
    x1: number;
    x2: number;
    at: number | null;
  }
  const ones: One[] = [];
  for (const send of story.sends) {
    const x1 = axis.x(send.sentAt);
    if (send.arrivals.length === 0) ones.push({ send, to: null, x1, x2: x1 + STUB_PX, at: null });
    for (const a of send.arrivals) ones.push({ send, to: a.lane, x1, x2: axis.x(a.at), at: a.at });
  }
  // Merge arrows between the same lanes in nearby columns, coarser until few enough remain.
  let width = COLUMN_PX;
  let groups = groupBy(ones, (o) => keyOf(o, width));
  // Past the plot's width every column is one: then the lanes and category alone key a group,
  // so at most 2 · lanes · (lanes + 1) remain (`arrowBound`).
  while (groups.length > MAX_ARROWS && width <= PLOT_RIGHT - PLOT_LEFT) {
    width *= 2;
    groups = groupBy(ones, (o) => keyOf(o, width));
  }
  function keyOf(o: One, w: number): string {
    const c = (x: number) => Math.floor((x - PLOT_LEFT) / w);
    return `${o.send.from}|${o.to}|${o.send.category}|${c(o.x1)}|${c(o.x2)}`;
  }
  const name = (lane: number | null) => (lane === null ? "" : (lanes[lane] as LaneBox).stream);
  return groups.map((group) => {
    const first = group[0] as One;
    const from = lanes[first.send.from] as LaneBox;
    const x1 = mean(group.map((o) => o.x1));
    const x2 = mean(group.map((o) => o.x2));
    const y1 = from.markY;
    const y2 = first.to === null ? from.markY - STUB_PX : (lanes[first.to] as LaneBox).markY;
    const what = first.send.category === "message" ? "message" : "integration event";
    const title =
      group.length > 1
        ? `${group.length} ${what}s ${name(first.send.from)} → ${first.to === null ? "handled by no actor shown" : name(first.to)}: ${countsOf(group.map((o) => o.send.kind))}`
        : first.to === null
          ? `${what} ${first.send.kind} ${first.send.id} (${first.send.status}) sent ${isoTime(first.send.sentAt)}${first.send.to ? ` to ${first.send.to}` : ""}: handled by no actor shown`
          : `${what} ${first.send.kind} ${first.send.id}: ${name(first.send.from)} → ${name(first.to)}, sent ${isoTime(first.send.sentAt)}, handled ${isoTime(first.at)} (${first.send.status})`;
    return {
      from: first.send.from,
      to: first.to,
      category: first.send.category,
      x1,
      y1,
      x2,
      y2,
      ids: group.map((o) => o.send.id),
      title: clip(title),
    };
  });
}

/** Groups in first-seen order. */
function groupBy<T>(items: readonly T[], key: (item: T) => string): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const g = groups.get(k);
    if (g) g.push(item);
    else groups.set(k, [item]);
  }
  return [...groups.values()];
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** `3× OrderPlaced, 2× PaymentNoted, ...`: the six commonest. */
function countsOf(names: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  const sorted = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const shown = sorted.slice(0, 6).map(([n, c]) => `${c}× ${n}`);
  return sorted.length > 6 ? `${shown.join(", ")}, ...` : shown.join(", ");
}

function clip(text: string): string {
  return text.length > TITLE_MAX ? `${text.slice(0, TITLE_MAX - 3)}...` : text;
}
