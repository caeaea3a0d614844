/**
 * The timeline's time axis: time left to right, with long idle stretches cut out. An order's story
 * is bursts (a few seconds of steps) separated by waits (an operator settling an hour later, a
 * timer due tomorrow): drawn linearly, the bursts would collapse into a line. So a gap longer than
 * a share of the time actually drawn is replaced by a fixed-width break that says how long it was,
 * and each stretch between breaks is linear. Pure: times in, pixels out.
 */

/** Width of a cut-out gap on the axis (px). */
export const BREAK_PX = 18;
/** Least width a stretch gets, so a lone instant between two breaks stays visible (px). */
const MIN_STRETCH_PX = 10;
/** A gap longer than this share of the time still drawn is cut out. */
const BREAK_SHARE = 0.2;
/** Gaps shorter than this are drawn to scale, however idle: a cut says "a wait", not "a few ms". */
const MIN_BREAK_MS = 1_000;
/** Most gaps cut out: past it, the rest are drawn to scale. */
const MAX_BREAKS = 12;
/** Least distance between two tick labels (px). */
const TICK_PX = 110;
/** Least distance between the centres of two labels on the axis (px). */
export const LABEL_PX = 64;

export interface Stretch {
  from: number;
  to: number;
  x1: number;
  x2: number;
}

export interface AxisBreak {
  /** Where the break is drawn (its left edge). */
  x: number;
  /** The time cut out (ms). */
  ms: number;
}

export interface Tick {
  x: number;
  at: number;
  /** Time of day (UTC), with milliseconds when ticks are closer than a second. */
  label: string;
}

export interface Axis {
  from: number;
  to: number;
  left: number;
  right: number;
  stretches: Stretch[];
  breaks: AxisBreak[];
  ticks: Tick[];
  x(at: number): number;
}

/** The axis for these times (any order, repeats allowed) drawn between `left` and `right`. */
export function buildAxis(times: readonly number[], left: number, right: number): Axis {
  if (!(right > left)) throw new RangeError(`timeline axis: right (${right}) must be past left (${left})`);
  const sorted = [...new Set(times.filter(Number.isFinite))].sort((a, b) => a - b);
  if (sorted.length === 0) sorted.push(0);
  const cuts = gapsToCut(sorted);
  const spans: [number, number][] = [];
  let start = sorted[0] as number;
  for (const i of cuts) {
    spans.push([start, sorted[i] as number]);
    start = sorted[i + 1] as number;
  }
  spans.push([start, sorted[sorted.length - 1] as number]);

  const width = right - left - cuts.length * BREAK_PX;
  const spare = Math.max(0, width - spans.length * MIN_STRETCH_PX);
  const ms = spans.reduce((sum, [a, b]) => sum + (b - a), 0);
  const stretches: Stretch[] = [];
  const breaks: AxisBreak[] = [];
  let x = left;
  spans.forEach(([a, b], i) => {
    const share = ms > 0 ? (b - a) / ms : 1 / spans.length;
    const w = Math.min(width, MIN_STRETCH_PX + spare * share);
    stretches.push({ from: a, to: b, x1: x, x2: x + w });
    x += w;
    const next = spans[i + 1];
    if (next) {
      breaks.push({ x, ms: next[0] - b });
      x += BREAK_PX;
    }
  });

  const axis: Axis = {
    from: sorted[0] as number,
    to: sorted[sorted.length - 1] as number,
    left,
    right,
    stretches,
    breaks,
    ticks: [],
    // Clamped: the sums of stretch widths may pass `right` by a rounding error.
    x: (at) => Math.min(right, Math.max(left, position(stretches, at))),
  };
  axis.ticks = apart(ticksOf(stretches), breaks);
  return axis;
}

/** Indexes i of the sorted times whose gap to i+1 is cut out, ascending. */
function gapsToCut(sorted: readonly number[]): number[] {
  const gaps = sorted.slice(1).map((t, i) => ({ i, ms: t - (sorted[i] as number) }));
  gaps.sort((a, b) => b.ms - a.ms || a.i - b.i);
  const total = (sorted[sorted.length - 1] as number) - (sorted[0] as number);
  const cut: number[] = [];
  let cutMs = 0;
  // Largest first: each cut shrinks the time still drawn, so the next gap is weighed against that.
  for (const gap of gaps) {
    if (cut.length >= MAX_BREAKS || gap.ms < MIN_BREAK_MS) break;
    if (gap.ms <= BREAK_SHARE * (total - cutMs - gap.ms)) break;
    cut.push(gap.i);
    cutMs += gap.ms;
  }
  return cut.sort((a, b) => a - b);
}

function position(stretches: readonly Stretch[], at: number): number {
  const first = stretches[0] as Stretch;
  if (at <= first.from) return first.x1;
  for (let i = 0; i < stretches.length; i++) {
    const s = stretches[i] as Stretch;
    if (at <= s.to) {
      if (at < s.from) return (stretches[i - 1] as Stretch).x2 + BREAK_PX / 2; // inside a cut gap
      return s.to === s.from ? (s.x1 + s.x2) / 2 : s.x1 + ((at - s.from) / (s.to - s.from)) * (s.x2 - s.x1);
    }
  }
  return (stretches[stretches.length - 1] as Stretch).x2;
}

const STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5];

function ticksOf(stretches: readonly Stretch[]): Tick[] {
  const ticks: Tick[] = [];
  for (const s of stretches) {
    const px = s.x2 - s.x1;
    const count = Math.floor(px / TICK_PX);
    if (s.to === s.from || count < 1) {
      ticks.push({ x: Math.min(s.x2, position(stretches, s.from)), at: s.from, label: label(s.from, 1000) });
      continue;
    }
    const wanted = (s.to - s.from) / count;
    const step = STEPS.find((st) => st >= wanted) ?? Math.ceil(wanted / 36e5) * 36e5;
    for (let at = Math.ceil(s.from / step) * step; at <= s.to; at += step)
      ticks.push({ x: Math.min(s.x2, position(stretches, at)), at, label: label(at, step) });
  }
  return ticks;
}

/** Ticks whose labels would overlap each other or a break's are left out. */
function apart(ticks: Tick[], breaks: readonly AxisBreak[]): Tick[] {
  const kept: Tick[] = [];
  const taken = breaks.map((b) => b.x + BREAK_PX / 2);
  for (const t of ticks) {
    if (taken.some((x) => Math.abs(x - t.x) < LABEL_PX)) continue;
    kept.push(t);
    taken.push(t.x);
  }
  return kept;
}

function label(at: number, step: number): string {
  const iso = new Date(at).toISOString();
  return step < 1000 ? iso.slice(11, 23) : iso.slice(11, 19);
}
