import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, type WriteStream } from "node:fs";
import { createServer } from "node:net";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { IntegrationStats } from "../contexts.js";

/**
 * The shop's worker as a child process that the demo kills and restarts. The port is chosen once
 * and reused by every incarnation, so clients and the warehouse keep one URL; while no worker
 * listens they get "connection refused" and retry, which is what they would do in production.
 */

const WORKER = fileURLToPath(new URL("../worker.ts", import.meta.url));

export async function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/**
 * Extra node flags for every worker, from `ONCELY_WORKER_NODE_ARGS` (split on whitespace), e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/shop-prof` to profile the workers: node refuses `--cpu-prof` in
 * NODE_OPTIONS, and the demo's own flags are not the workers'. A profile is written only by a worker
 * that exits cleanly (SIGTERM at the end), never by one the demo SIGKILLs.
 */
export function workerNodeArgs(env: Record<string, string | undefined>): string[] {
  return (env.ONCELY_WORKER_NODE_ARGS ?? "").split(/\s+/).filter((arg) => arg !== "");
}

export interface WorkerStats {
  runtime: { duplicates: number; commands: number };
  dispatcher: { retried: number; runs: number };
  integration?: IntegrationStats | null;
}

export interface SupervisorEvents {
  /** A worker died without being asked to stop (a kill, a fault point, a crash). */
  onExit?(info: { incarnation: number; signal: NodeJS.Signals | null; code: number | null; requested: boolean }): void;
}

export class WorkerSupervisor {
  incarnations = 0;
  killedByParent = 0;
  killedAtFaultPoint = 0;
  crashed = 0;
  finalStats: WorkerStats | undefined;
  /** Set when the worker could not be (re)started; the demo stops and reports it. */
  failure: Error | undefined;
  private child: ChildProcess | undefined;
  private killRequested = false;
  private stopping = false;
  private readyPromise: Promise<void> | undefined;
  private readonly log: WriteStream;
  private consecutiveStartFailures = 0;

  constructor(
    private readonly env: Record<string, string>,
    private readonly nextFault: () => string | undefined,
    logPath: string,
    private readonly events: SupervisorEvents = {},
    /** Prefix of the dispatcher's lease owner id: unique per supervised worker. */
    private readonly name = "demo-worker",
    /**
     * A command the worker's node runs under, e.g. `ip netns exec <namespace>` (a partition run). It must
     * exec node in place (ip netns exec does), so the child's pid is the worker's and a kill reaches it.
     */
    private readonly prefix: readonly string[] = [],
  ) {
    this.log = createWriteStream(logPath, { flags: "a" });
  }

  /** Resolves when the current incarnation listens. */
  ready(): Promise<void> {
    return this.readyPromise ?? Promise.reject(new Error("worker not started"));
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    this.incarnations++;
    const incarnation = this.incarnations;
    const fault = this.nextFault();
    const env: Record<string, string> = {
      ...this.env,
      DISPATCHER_OWNER: `${this.name}-${incarnation}`,
      ONCELY_WORKER_PARENT_PIPE: "1",
    };
    if (fault) env.ONCELY_FAULT = fault;
    this.log.write(`--- incarnation ${incarnation}${fault ? ` (ONCELY_FAULT=${fault})` : ""} ---\n`);
    // node --import tsx, not the tsx CLI: the CLI runs the script in a grandchild that a SIGKILL of the CLI would orphan.
    const nodeArgs = [...workerNodeArgs(this.env), "--import", "tsx", WORKER];
    const [command, ...args] = [...this.prefix, process.execPath, ...nodeArgs] as [string, ...string[]];
    const child = spawn(command, args, {
      env,
      // stdin stays open and unwritten: the worker stops when it ends, that is when this process dies.
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child = child;
    this.killRequested = false;
    child.stderr?.pipe(this.log, { end: false });
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    this.readyPromise = new Promise<void>((resolve, reject) => {
      let ready = false;
      lines.on("line", (line) => {
        let message: { ready?: boolean; stopped?: boolean; stats?: WorkerStats };
        try {
          message = JSON.parse(line);
        } catch {
          this.log.write(`${line}\n`);
          return;
        }
        if (message.ready && !ready) {
          ready = true;
          this.consecutiveStartFailures = 0;
          resolve();
        }
        if (message.stopped && message.stats) this.finalStats = message.stats;
      });
      child.once("exit", (code, signal) => {
        const requested = this.killRequested || this.stopping;
        if (!ready) this.consecutiveStartFailures++;
        if (signal === "SIGKILL") {
          if (this.killRequested) this.killedByParent++;
          else this.killedAtFaultPoint++;
        } else if (!this.stopping) {
          this.crashed++;
        }
        this.events.onExit?.({ incarnation, signal, code, requested });
        if (this.stopping) {
          if (!ready) reject(new Error(`worker exited before it was ready (code ${code}, signal ${signal})`));
          return;
        }
        if (this.consecutiveStartFailures >= 3) {
          reject(
            new Error(
              `worker failed to start 3 times in a row (last: code ${code}, signal ${signal}); see the worker log`,
            ),
          );
          return;
        }
        // Restarted at once: every incarnation takes over the outbox where the last left it.
        this.start().then(resolve, reject);
      });
    });
    // Observed here so a failed restart nobody is awaiting yet is kept, not an unhandled rejection.
    this.readyPromise.catch((error: unknown) => {
      this.failure = error instanceof Error ? error : new Error(String(error));
    });
    return this.readyPromise;
  }

  /** SIGKILL the current worker (no clean-up, no goodbye); it is restarted at once. */
  kill(): void {
    if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.killRequested = true;
    this.child.kill("SIGKILL");
  }

  /** SIGTERM and wait for a clean exit (its last counters arrive as the `stopped` line). */
  async stop(timeoutMs = 15_000): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      await exited;
      clearTimeout(timer);
    }
    await new Promise<void>((resolve) => this.log.end(resolve));
  }
}
