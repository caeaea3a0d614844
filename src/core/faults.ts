import { InjectedFault } from "../base/errors.js";

/**
 * Named fault points at every persistence boundary. They are inert unless a test arms them,
 * so crash tests hit exact boundaries instead of sleeping and hoping.
 */
export const FAULT_POINTS = [
  /** decide ran, nothing committed yet. */
  "command.accepted",
  /** The commit of events + outbox + inbox is about to run. */
  "commit.before",
  /** The commit landed; the caller has not been told. */
  "commit.after",
  /** A dispatcher holds the lease and is about to call the handler. */
  "dispatch.beforeHandler",
  /** The provider answered; its outcome is not yet recorded. The classic double-charge window. */
  "dispatch.afterProvider",
  /** The outcome (and the outbox row done) committed; the dispatcher has not released anything yet. */
  "dispatch.outcomeCommitted",
  /** A delivered message's receiver committed its inbox row; the sender has not recorded the ack. */
  "delivery.inboxRecorded",
  /** A sequenced consumer stored its checkpoint. */
  "consumer.checkpointStored",
  /** The relay holds the lease on an integration event's row and is about to publish it (nothing sent yet). */
  "relay.beforePublish",
  /** The relay published an integration event; the outbox row is not yet marked. */
  "relay.published",
] as const;

export type FaultPoint = (typeof FAULT_POINTS)[number];

/** What an armed point does: throw (default), or anything else (a test may kill the process). */
export type FaultAction = (point: FaultPoint) => void | Promise<void>;

export interface Faults {
  /**
   * Called by runtime code at a point: what to wait for when the point is armed, undefined when it
   * is not. Callers wait only for a promise (`const f = faults.hit(p); if (f) await f;`): these
   * points sit on every command, commit and handler call, where an awaited no-op per point was a
   * promise and a turn of the event loop each.
   */
  hit(point: FaultPoint): Promise<void> | undefined;
}

export const noFaults: Faults = { hit: () => undefined };

interface Arming {
  action: FaultAction;
  /** Skip this many hits before firing. */
  after: number;
  /** Fire this many times (Infinity for always). */
  times: number;
}

/** A fault registry for tests: `faults.arm("dispatch.afterProvider")` makes the next hit throw. */
export class ArmableFaults implements Faults {
  private readonly armed = new Map<FaultPoint, Arming>();
  readonly fired: FaultPoint[] = [];

  arm(point: FaultPoint, options: { action?: FaultAction; after?: number; times?: number } = {}): this {
    this.armed.set(point, {
      action:
        options.action ??
        ((p) => {
          throw new InjectedFault(p);
        }),
      after: options.after ?? 0,
      times: options.times ?? 1,
    });
    return this;
  }

  disarm(point?: FaultPoint): void {
    if (point) this.armed.delete(point);
    else this.armed.clear();
  }

  hit(point: FaultPoint): Promise<void> | undefined {
    const arming = this.armed.get(point);
    if (!arming) return undefined;
    if (arming.after > 0) {
      arming.after--;
      return undefined;
    }
    arming.times--;
    if (arming.times <= 0) this.armed.delete(point);
    this.fired.push(point);
    return fire(arming.action, point);
  }
}

/** Arms points from an environment variable such as `ONCELY_FAULT=dispatch.afterProvider:kill:3` (child-process crash tests). */
export function faultsFromEnv(value: string | undefined): Faults {
  if (!value) return noFaults;
  const faults = new ArmableFaults();
  for (const spec of value.split(",")) {
    const [point, mode = "throw", after = "0"] = spec.split(":");
    if (!FAULT_POINTS.includes(point as FaultPoint)) {
      throw new Error(`ONCELY_FAULT names an unknown fault point "${point}"; known: ${FAULT_POINTS.join(", ")}`);
    }
    if (mode !== "throw" && mode !== "kill") {
      throw new Error(`ONCELY_FAULT mode must be "throw" or "kill", got "${mode}"`);
    }
    const kill = () => {
      process.kill(process.pid, "SIGKILL");
    };
    faults.arm(point as FaultPoint, { after: Number(after), ...(mode === "kill" ? { action: kill } : {}) });
  }
  return faults;
}

/** An armed point's action, as a promise (a throwing action rejects it). */
async function fire(action: FaultAction, point: FaultPoint): Promise<void> {
  await action(point);
}
