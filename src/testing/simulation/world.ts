import type { AnyActor } from "../../core/actor.js";
import { type Random, seededRandom, sequentialIds } from "../../core/clock.js";
import type { Typed } from "../../core/decider.js";
import { ArmableFaults, type FaultPoint, type Faults } from "../../core/faults.js";
import { createRuntime, type Runtime } from "../../core/runtime.js";
import type { EffectHandler } from "../../effects/types.js";
import { type CommitFault, MemoryJournal } from "../../journal/memory.js";
import type { Journal } from "../../journal/types.js";
import { SimulatedClock } from "../clock.js";
import { type Budget, Stall } from "./budget.js";
import { observeCoverage } from "./coverage.js";
import { type DrawOptions, drawWorld, type WorldDraw, withSnapshotEvery } from "./draw.js";
import type { SimulatedProvider } from "./provider.js";
import type { Step, StepWeights } from "./steps.js";
import type { PublishFault } from "./transport.js";
import { clockGuard, SIM_EPOCH } from "./wiring.js";

/** A command the workload delivers (at least once, with a stable message id). */
export interface SimCommand {
  address: string;
  command: Typed;
  messageId: string;
}

/** Anything that does background work in steps: a dispatcher, a relay, a consumer. */
export interface SimWorker {
  name: string;
  runOnce(): Promise<number>;
}

/**
 * What `workers` may return: a `SimWorker`, or a `Dispatcher` or `Relay` (anything with
 * `runOnce`) as it is, named after its lease `owner`.
 */
export type SimWorkerLike = SimWorker | { runOnce(): Promise<number> };

function asWorker(worker: SimWorkerLike, index: number): SimWorker {
  if ("name" in worker && typeof worker.name === "string") return worker;
  const owner = (worker as { owner?: unknown }).owner;
  const name = typeof owner === "string" ? owner : `worker-${index + 1}`;
  return { name, runOnce: () => worker.runOnce() };
}

/** What a system's factories get to build workers on one process "generation". */
export interface SimEnv {
  runtime: Runtime;
  journal: Journal;
  clock: SimulatedClock;
  random: Random;
  faults: Faults;
  handlers: EffectHandler[];
  /** The run's providers (they outlive crashes: they are the outside world). */
  // biome-ignore lint/suspicious/noExplicitAny: providers of any input and result type
  providers: SimulatedProvider<any, any>[];
  /** Memory of the world outside the process (e.g. what a warehouse already called back); survives crashes. */
  outside: Map<string, unknown>;
  /** Increases at every simulated crash; use it in lease owner names. */
  generation: number;
  /** The world this seed drew (which providers dedup, snapshot interval). */
  world: WorldDraw;
  /** The fault the next publish meets, if a `publish-fault` step queued one (see `simulatedTransport`). */
  publishFault(): PublishFault | undefined;
  /** Count a notable event in the run's report (`coverage:<kind>` feeds the coverage counters). */
  count(name: string): void;
}

/**
 * Something the world outside the process does at a step of its own (`act`), at a moment the seed
 * picks: a customer cancelling an order, a provider reporting news through its callback. It
 * answers what it did (counted as `act:<name>:<answer>`, so a test can require each moment to be
 * reached), or undefined when there was nothing to act on. An error it throws is absorbed and
 * counted like any a client would see.
 */
export interface SimAction {
  name: string;
  run(env: SimEnv, pick: number): Promise<string | undefined>;
}

export interface Invariant {
  name: string;
  /** Messages describing violations; empty when the invariant holds. */
  check(world: SimWorld): Promise<string[]>;
}

export interface SimulationSystem {
  name: string;
  actors: AnyActor[];
  /**
   * Fresh providers for one run (their ledgers are what the invariants audit). Use
   * `world.dedups(kind)` unless a provider's dedup is a given of the system: the seed then decides.
   */
  // biome-ignore lint/suspicious/noExplicitAny: providers of any input and result type
  providers(world: WorldDraw): SimulatedProvider<any, any>[];
  /** Handlers for the providers (default: each provider's own `handler()`). */
  // biome-ignore lint/suspicious/noExplicitAny: providers of any input and result type
  handlers?(providers: SimulatedProvider<any, any>[]): EffectHandler[];
  /**
   * Build the background workers of one process; called at start and after every crash. Build
   * them with `env`'s journal, runtime, clock, random and faults (a worker with a clock of its
   * own fails the run: `clock-injected`).
   */
  workers(env: SimEnv): SimWorkerLike[];
  /**
   * The fault points this system's code can reach (default: all of `FAULT_POINTS`). Crash steps
   * arm only these, and `runSeeds` fails a budget of seeds in which one of them was armed but
   * never fired: a point armed in vain means a path the run claims to test was never taken.
   */
  faultPoints?: readonly FaultPoint[];
  /** The commands to deliver, drawn from the seed. */
  workload(random: Random): SimCommand[];
  /** What the outside world does at `act` steps (give the step a weight in `weights`: it is off by default). */
  actions?: SimAction[];
  /** The system's own step weights over `DEFAULT_WEIGHTS` (a run's `weights` option still wins). */
  weights?: Partial<StepWeights>;
  /** The next release, for `upgrade` steps (give the step a weight: it is off by default). */
  upgrade?: SystemUpgrade;
  /** Whether the workflow of one actor is finished (checked once faults stop). */
  isTerminal?(address: string, state: unknown): boolean;
  invariants?: Invariant[];
  /** Settle what waits for an operator; returns how many were settled. Runs once faults stop. */
  operator?(world: SimWorld): Promise<number>;
  /** The one-line command that reproduces a run (`options`: the run's options beyond seed and steps). */
  reproduce?(
    seed: number,
    steps: string,
    options: { alwaysRecover?: boolean | undefined; snapshotEvery?: number | undefined },
  ): string;
}

/**
 * The system's next release, deployed mid-run by an `upgrade` step: the running process stops
 * where it stands (a deploy that kills it: whatever was in flight is in the journal) and one
 * running the new code starts on the same journal, providers and outside world.
 */
export interface SystemUpgrade {
  /** The new actor definitions (same types), with their upcasters and snapshot migrations. */
  actors: AnyActor[];
  /** The new effect handlers (default: unchanged), with their input upcasters. */
  // biome-ignore lint/suspicious/noExplicitAny: providers of any input and result type
  handlers?(providers: SimulatedProvider<any, any>[]): EffectHandler[];
  /** The new process's workers (default: the system's `workers`). */
  workers?(env: SimEnv): SimWorker[];
  /** A command not yet delivered (or to be delivered again), as the upgraded clients send it. */
  command?(command: SimCommand): SimCommand;
}

/** Thrown by an armed fault point: the simulated process dies right there. */
export class SimulatedCrash extends Error {
  constructor(readonly point: string) {
    super(`simulated crash at ${point}`);
    this.name = "SimulatedCrash";
  }
}

/** Thrown to a dead generation's code that still runs (a zombie after a pause or crash). */
export class ProcessDead extends Error {
  constructor() {
    super("this simulated process has crashed");
    this.name = "ProcessDead";
  }
}

interface Generation {
  alive: boolean;
  runtime: Runtime;
  workers: SimWorker[];
  env: SimEnv;
}

/**
 * The simulated world: one memory journal that survives crashes, and a process generation
 * (runtime + workers) that a crash throws away. A dead generation's journal calls fail, so
 * nothing a dead process does after its crash point lands.
 */
export class SimWorld {
  readonly journal: MemoryJournal;
  readonly clock = new SimulatedClock(SIM_EPOCH);
  private readonly clockChecked = clockGuard(
    () => this.clock.now(),
    (message) => this.violations.push({ invariant: "clock-injected", message }),
  );
  readonly faults = new ArmableFaults();
  readonly random: Random;
  readonly pending: SimCommand[];
  readonly acked: SimCommand[] = [];
  readonly violations: { invariant: string; message: string }[] = [];
  readonly counts: Record<string, number> = {};
  readonly outside = new Map<string, unknown>();
  private readonly commitFaults: CommitFault[] = [];
  private readonly publishFaults: PublishFault[] = [];
  readonly draw: WorldDraw;
  /** The system's actors (after an `upgrade`, the new release's) with the drawn snapshot interval. */
  actors: SimulationSystem["actors"];
  /** True once the `upgrade` step deployed the next release. */
  upgraded = false;
  private generation!: Generation;
  private generationNumber = 0;
  handlers: EffectHandler[];
  // biome-ignore lint/suspicious/noExplicitAny: providers of any input and result type
  readonly providers: SimulatedProvider<any, any>[];

  constructor(
    readonly system: SimulationSystem,
    readonly seed: number,
    options: DrawOptions & { budget?: Budget } = {},
  ) {
    this.budget = options.budget;
    this.journal = new MemoryJournal({ commitFault: () => this.commitFaults.shift() });
    this.random = seededRandom(seed ^ 0x5bd1e995);
    this.pending = system.workload(seededRandom(seed));
    this.draw = drawWorld(seed, options);
    this.actors = withSnapshotEvery(system.actors, this.draw.snapshotEvery);
    this.providers = system.providers(this.draw);
    this.handlers = system.handlers ? system.handlers(this.providers) : this.providers.map((p) => p.handler());
    this.start();
  }

  get runtime(): Runtime {
    return this.generation.runtime;
  }

  get workers(): SimWorker[] {
    return this.generation.workers;
  }

  count(name: string): void {
    this.counts[name] = (this.counts[name] ?? 0) + 1;
  }

  private start(): void {
    const generation = { alive: true } as Generation;
    const journal = fenced(
      observeCoverage(
        this.journal,
        (name) => this.count(name),
        (invariant, message) => this.violations.push({ invariant, message }),
      ),
      generation,
      this.budget,
      this.clockChecked,
    );
    const n = ++this.generationNumber;
    // Armed points are shared, but whoever hits one is the process that dies there.
    const faults = {
      hit: (point: Parameters<ArmableFaults["hit"]>[0]) => {
        this.hitting = generation;
        return this.faults.hit(point);
      },
    };
    const runtime = createRuntime({
      journal,
      actors: this.actors,
      clock: this.clock,
      ids: sequentialIds(`g${n}`),
      random: this.random,
      faults,
    });
    generation.runtime = runtime;
    const release = this.upgraded ? this.system.upgrade : undefined;
    generation.env = {
      runtime,
      journal,
      clock: this.clock,
      random: this.random,
      faults,
      handlers: this.handlers,
      providers: this.providers,
      outside: this.outside,
      generation: n,
      world: this.draw,
      publishFault: () => this.publishFaults.shift(),
      count: (name) => this.count(name),
    };
    generation.workers = (release?.workers ?? this.system.workers).call(this.system, generation.env).map(asWorker);
    this.generation = generation;
  }

  private readonly budget: Budget | undefined;

  /** The current process dies where it stands (a stalled run is abandoned: nothing it does later lands). */
  kill(): void {
    this.generation.alive = false;
  }

  /** Lose all memory; keep what was committed. */
  crash(): void {
    this.generation.alive = false;
    this.restartIfDead();
  }

  /**
   * Start a new process if the current one died. A step restarts it when it ends, but work the
   * step left running (a handler handed over at commit, a log reader's delivery) may hit a crash
   * point after that: whoever reads the world next (an invariant check) restarts it first.
   */
  restartIfDead(): void {
    if (this.generation.alive) return;
    this.generation.runtime.close();
    this.count("crash");
    this.start();
  }

  /** Deploy the next release, once: the old process dies where it stands, the new one starts. */
  private upgrade(): void {
    const next = this.system.upgrade;
    if (!next || this.upgraded) return;
    this.upgraded = true;
    this.count("upgrade");
    this.generation.alive = false;
    this.generation.runtime.close();
    this.actors = withSnapshotEvery(next.actors, this.draw.snapshotEvery);
    if (next.handlers) this.handlers = next.handlers(this.providers);
    const command = next.command;
    if (command) {
      for (const list of [this.pending, this.acked]) list.splice(0, list.length, ...list.map(command));
    }
    this.start();
  }

  /** Run one step. Errors a real client or process would see are absorbed and counted. */
  async run(step: Step): Promise<void> {
    try {
      await this.perform(step);
    } catch (error) {
      this.absorb(error);
    }
    this.restartIfDead();
  }

  private hitting: Generation | undefined;

  private absorb(error: unknown): void {
    // A spent budget ends the run; nothing may absorb it.
    if (error instanceof Stall) throw error;
    if (error instanceof SimulatedCrash || error instanceof ProcessDead) return;
    this.count(`error:${error instanceof Error ? error.name : "unknown"}`);
  }

  private async perform(step: Step): Promise<void> {
    switch (step.kind) {
      case "deliver": {
        if (this.pending.length === 0) return;
        const index = step.pick % this.pending.length;
        const command = this.pending[index] as SimCommand;
        await this.runtime.send(command.address, command.command, { messageId: command.messageId });
        this.pending.splice(index, 1);
        this.acked.push(command);
        return;
      }
      case "duplicate": {
        if (this.acked.length === 0) return;
        const command = this.acked[step.pick % this.acked.length] as SimCommand;
        const result = await this.runtime.send(command.address, command.command, { messageId: command.messageId });
        this.count("duplicate");
        if (!result.duplicate) {
          this.violations.push({
            invariant: "duplicates-suppressed",
            message: `message ${command.messageId} to ${command.address} was handled twice`,
          });
        }
        return;
      }
      case "work": {
        if (this.workers.length === 0) return;
        await (this.workers[step.pick % this.workers.length] as SimWorker).runOnce();
        return;
      }
      case "tick":
        this.clock.advance(step.ms);
        return;
      case "crash":
        this.crash();
        return;
      case "crash-at":
        this.count(`crash-at:${step.point}`);
        this.faults.arm(step.point, {
          action: (point) => {
            if (this.hitting) this.hitting.alive = false;
            throw new SimulatedCrash(point);
          },
        });
        return;
      case "commit-fault":
        this.count(`commit-${step.mode}`);
        this.commitFaults.push(step.mode);
        return;
      case "provider-fault": {
        const providers = this.providers;
        if (providers.length === 0) return;
        this.count(`provider-${step.mode}`);
        providers[step.pick % providers.length]?.injectFault(step.mode);
        return;
      }
      case "publish-fault":
        this.count(`publish-${step.mode}`);
        this.publishFaults.push(step.mode);
        return;
      case "upgrade":
        this.upgrade();
        return;
      case "act": {
        const actions = this.system.actions ?? [];
        const action = actions[step.pick % Math.max(1, actions.length)];
        if (!action) return;
        // The rest of the pick parameterises the action (which order, which line), independent of which action.
        const did = await action.run(this.generation.env, Math.floor(step.pick / actions.length));
        if (did !== undefined) this.count(`act:${action.name}:${did}`);
        return;
      }
      case "pause": {
        this.count("pause");
        // The next dispatcher to reach its handler call stalls there; meanwhile time passes beyond
        // every lease and another worker takes over. Then the stalled one carries on.
        this.faults.arm("dispatch.beforeHandler", {
          action: async () => {
            this.clock.advance(10 * 60_000);
            const other = this.workers[(step.pick + 1) % Math.max(1, this.workers.length)];
            await other?.runOnce().catch((error) => this.absorb(error));
          },
        });
        return;
      }
    }
  }

  /** One turn of worker `index` (calm phase); returns rows processed, 0 on error. */
  async work(index: number): Promise<number> {
    const worker = this.workers[index];
    if (!worker) return 0;
    let processed = 0;
    try {
      processed = await worker.runOnce();
    } catch (error) {
      this.absorb(error);
    }
    this.restartIfDead();
    return processed;
  }

  /** Stop injecting faults: disarm points, drop queued commit and provider faults. */
  calm(): void {
    this.faults.disarm();
    this.commitFaults.length = 0;
    this.publishFaults.length = 0;
    for (const provider of this.providers) provider.clearFaults();
  }
}

/**
 * A journal view that refuses every call once its process generation is dead, and once the run's
 * wall-clock budget is spent (checked synchronously, so a loop of resolved awaits is cut too).
 */
function fenced(
  journal: Journal,
  generation: { alive: boolean },
  budget: Budget | undefined,
  checkTime: (journal: Journal, method: string, args: unknown[]) => void,
): Journal {
  return new Proxy(journal, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (!generation.alive) return Promise.reject(new ProcessDead());
        try {
          budget?.check(`journal.${String(property)}`);
        } catch (error) {
          return Promise.reject(error);
        }
        checkTime(target, String(property), args);
        return value.apply(target, args);
      };
    },
  });
}
