import type { Random } from "../../core/clock.js";
import { FAULT_POINTS, type FaultPoint } from "../../core/faults.js";
import type { PublishFault } from "./transport.js";

/**
 * One simulated step. Steps carry small numbers ("pick"), resolved against the world's state
 * when they run (modulo what exists), so any subsequence of a run is still a valid run: that is
 * what lets the shrinker delete steps freely.
 */
export type Step =
  | { kind: "deliver"; pick: number }
  | { kind: "duplicate"; pick: number }
  | { kind: "work"; pick: number }
  | { kind: "tick"; ms: number }
  | { kind: "crash" }
  | { kind: "crash-at"; point: FaultPoint }
  | { kind: "commit-fault"; mode: "abort" | "ambiguous" }
  | { kind: "provider-fault"; pick: number; mode: "fail" | "succeed-then-timeout" }
  | { kind: "pause"; pick: number }
  | { kind: "publish-fault"; mode: PublishFault }
  /** Deploy the system's next release (`SimulationSystem.upgrade`) where the run stands; once per run. */
  | { kind: "upgrade" }
  /**
   * The outside world acts where the run stands: one of the system's `actions` (a customer cancels,
   * a warehouse reports lines it cannot ship), picked and parameterised by `pick`.
   */
  | { kind: "act"; pick: number };

export type StepKind = Step["kind"];

/** Relative weights of step kinds; 0 turns a kind off. */
export type StepWeights = Record<StepKind, number>;

export const DEFAULT_WEIGHTS: StepWeights = {
  deliver: 12,
  duplicate: 3,
  work: 30,
  tick: 10,
  crash: 2,
  "crash-at": 3,
  "commit-fault": 3,
  "provider-fault": 5,
  pause: 2,
  "publish-fault": 3,
  // Off unless asked for (a system with an `upgrade`): a zero weight leaves every existing seed's steps as they were.
  upgrade: 0,
  // Off unless a system with `actions` gives it a weight (`SimulationSystem.weights`), for the same reason.
  act: 0,
};

/** Which steps are faults (for the report's "faults injected by type"). */
export const FAULT_KINDS: readonly StepKind[] = [
  "duplicate",
  "crash",
  "crash-at",
  "commit-fault",
  "provider-fault",
  "pause",
  "publish-fault",
  "upgrade",
];

export function generateSteps(
  random: Random,
  count: number,
  weights: StepWeights,
  points: readonly FaultPoint[] = FAULT_POINTS,
): Step[] {
  const kinds = (Object.keys(weights) as StepKind[]).filter((k) => weights[k] > 0);
  const total = kinds.reduce((sum, k) => sum + weights[k], 0);
  const pick = () => Math.floor(random.next() * 1_000_000);
  const steps: Step[] = [];
  for (let i = 0; i < count; i++) {
    let roll = random.next() * total;
    let kind = kinds[kinds.length - 1] as StepKind;
    for (const k of kinds) {
      roll -= weights[k];
      if (roll < 0) {
        kind = k;
        break;
      }
    }
    steps.push(makeStep(kind, random, pick, points));
  }
  return steps;
}

function makeStep(kind: StepKind, random: Random, pick: () => number, points: readonly FaultPoint[]): Step {
  switch (kind) {
    case "deliver":
    case "duplicate":
    case "work":
    case "pause":
    case "act":
      return { kind, pick: pick() };
    case "tick":
      // Mostly short ticks, sometimes long enough to expire leases and fire backoff timers.
      return {
        kind,
        ms: random.next() < 0.8 ? 1 + Math.floor(random.next() * 2_000) : 30_000 + Math.floor(random.next() * 120_000),
      };
    case "crash":
    case "upgrade":
      return { kind };
    case "crash-at":
      // A system that reaches no fault point still crashes, just not at a named point.
      if (points.length === 0) return { kind: "crash" };
      return { kind, point: points[pick() % points.length] as FaultPoint };
    case "commit-fault":
      return { kind, mode: random.next() < 0.5 ? "abort" : "ambiguous" };
    case "provider-fault":
      return { kind, pick: pick(), mode: random.next() < 0.5 ? "fail" : "succeed-then-timeout" };
    case "publish-fault":
      return { kind, mode: PUBLISH_FAULTS[Math.floor(random.next() * PUBLISH_FAULTS.length)] as PublishFault };
  }
}

const PUBLISH_FAULTS: readonly PublishFault[] = ["fail", "lost-ack", "duplicate"];
const PUBLISH_CODES: Record<PublishFault, string> = { fail: "f", "lost-ack": "a", duplicate: "d" };

/** Compact text form, for the reproduction line: `d12 w3 t500 c x:dispatch.afterProvider ...`. */
export function formatSteps(steps: Step[]): string {
  return steps.map(formatStep).join(" ");
}

function formatStep(s: Step): string {
  switch (s.kind) {
    case "deliver":
      return `d${s.pick}`;
    case "duplicate":
      return `u${s.pick}`;
    case "work":
      return `w${s.pick}`;
    case "tick":
      return `t${s.ms}`;
    case "crash":
      return "c";
    case "upgrade":
      return "g";
    case "crash-at":
      return `x:${s.point}`;
    case "commit-fault":
      return s.mode === "abort" ? "ca" : "cm";
    case "provider-fault":
      return `p${s.pick}:${s.mode === "fail" ? "f" : "s"}`;
    case "pause":
      return `z${s.pick}`;
    case "act":
      return `a${s.pick}`;
    case "publish-fault":
      return `r:${PUBLISH_CODES[s.mode]}`;
  }
}

export function parseSteps(text: string): Step[] {
  return text
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map((token): Step => {
      const num = (s: string) => {
        const n = Number(s);
        if (!Number.isInteger(n) || n < 0) throw new Error(`bad step "${token}": expected a non-negative integer`);
        return n;
      };
      if (token === "c") return { kind: "crash" };
      if (token === "g") return { kind: "upgrade" };
      if (token === "ca") return { kind: "commit-fault", mode: "abort" };
      if (token === "cm") return { kind: "commit-fault", mode: "ambiguous" };
      if (token.startsWith("r:")) {
        const mode = PUBLISH_FAULTS.find((m) => PUBLISH_CODES[m] === token.slice(2));
        if (!mode) throw new Error(`bad step "${token}": publish fault must be r:f, r:a or r:d`);
        return { kind: "publish-fault", mode };
      }
      if (token.startsWith("x:")) {
        const point = token.slice(2) as FaultPoint;
        if (!FAULT_POINTS.includes(point)) throw new Error(`bad step "${token}": unknown fault point`);
        return { kind: "crash-at", point };
      }
      const head = token[0];
      const rest = token.slice(1);
      if (head === "d") return { kind: "deliver", pick: num(rest) };
      if (head === "u") return { kind: "duplicate", pick: num(rest) };
      if (head === "w") return { kind: "work", pick: num(rest) };
      if (head === "t") return { kind: "tick", ms: num(rest) };
      if (head === "z") return { kind: "pause", pick: num(rest) };
      if (head === "a") return { kind: "act", pick: num(rest) };
      if (head === "p") {
        const [n, mode] = rest.split(":");
        if (mode !== "f" && mode !== "s") throw new Error(`bad step "${token}": mode must be f or s`);
        return { kind: "provider-fault", pick: num(n ?? ""), mode: mode === "f" ? "fail" : "succeed-then-timeout" };
      }
      throw new Error(`bad step "${token}"`);
    });
}
