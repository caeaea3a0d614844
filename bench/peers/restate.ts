import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import http2 from "node:http2";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { arch, platform, tmpdir } from "node:os";
import { join } from "node:path";
import {
  CallLedger,
  ORDER_STEPS,
  orderKey,
  runAsChild,
  runWorkload,
  type WorkflowFigures,
  type WorkflowOptions,
} from "../workflow-figures.js";

/**
 * The order workflow on Restate: the native server from `@restatedev/restate-server` runs as a
 * child process on free loopback ports with a temporary data directory; a virtual object `order`
 * (TypeScript SDK 1.17) runs four `ctx.run` steps, each recording its call under
 * `order:<id>:<step>`. Orders are invoked through the server's HTTP ingress; an order's latency
 * runs from the request to its response (after the last step's result is journaled).
 * The server and the endpoint are stopped at the end, also when the run fails.
 *
 * Run alone: `npx tsx bench/peers/restate.ts [--orders N --inflight N]` (after `npm ci --prefix bench/peers`).
 */

// SDK 1.17 calls Promise.withResolvers, which Node 20 lacks (it arrived in Node 22).
if (typeof (Promise as { withResolvers?: unknown }).withResolvers !== "function") {
  Object.defineProperty(Promise, "withResolvers", {
    configurable: true,
    writable: true,
    value<T>() {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}
// By default the SDK logs two INFO lines to stdout per invocation ("Starting invocation.", "Invocation
// completed successfully."); the other systems log only errors (DBOS `logLevel: "error"`, the server
// `warn`), so the SDK gets the same. It reads the level once, when loaded; a level set by whoever runs
// the bench wins.
process.env.RESTATE_LOGGING ??= "WARN";
// Imported after the polyfill (and the level), which static imports would precede.
const restate = await import("@restatedev/restate-sdk");

const LOOPBACK = "127.0.0.1";
const STARTUP_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 20_000;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, LOOPBACK, () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The server binary shipped in the platform package that `@restatedev/restate-server` depends on. */
const serverBinary = (): string =>
  createRequire(import.meta.url).resolve(`@restatedev/restate-server-${platform()}-${arch()}/bin/restate-server`);

interface RunningServer {
  process: ChildProcess;
  ingress: string;
  admin: string;
  logFile: string;
}

async function startServer(dataDir: string): Promise<RunningServer> {
  const [ingressPort, adminPort, nodePort] = [await freePort(), await freePort(), await freePort()];
  const logFile = join(dataDir, "server.log");
  const log = openSync(logFile, "a");
  const child = spawn(serverBinary(), ["--base-dir", join(dataDir, "data"), "--no-logo", "--node-name", "bench"], {
    stdio: ["ignore", log, log],
    env: {
      ...process.env,
      RESTATE_LISTEN_MODE: "tcp",
      RESTATE_BIND_ADDRESS: `${LOOPBACK}:${nodePort}`,
      RESTATE_ADVERTISED_ADDRESS: `http://${LOOPBACK}:${nodePort}/`,
      RESTATE_INGRESS__BIND_ADDRESS: `${LOOPBACK}:${ingressPort}`,
      RESTATE_ADMIN__BIND_ADDRESS: `${LOOPBACK}:${adminPort}`,
      // Loopback only: no usage reports.
      RESTATE_DISABLE_TELEMETRY: "true",
      SCARF_ANALYTICS: "false",
      RESTATE_LOG_FILTER: "warn",
    },
  });
  const server = {
    process: child,
    ingress: `http://${LOOPBACK}:${ingressPort}`,
    admin: `http://${LOOPBACK}:${adminPort}`,
    logFile,
  };
  const deadline = performance.now() + STARTUP_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`restate-server exited (${child.exitCode}): ${tail(logFile)}`);
    const ready = await Promise.all([
      fetch(`${server.admin}/health`).then(
        (r) => r.ok,
        () => false,
      ),
      fetch(`${server.ingress}/restate/health`).then(
        (r) => r.ok,
        () => false,
      ),
    ]);
    if (ready.every(Boolean)) return server;
    if (performance.now() > deadline) throw new Error(`restate-server not ready in time: ${tail(logFile)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const tail = (file: string): string => readFileSync(file, "utf8").slice(-2_000);

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

async function listenEndpoint(ledger: CallLedger): Promise<{ server: http2.Http2Server; port: number }> {
  const order = restate.object({
    name: "order",
    handlers: {
      process: async (ctx: import("@restatedev/restate-sdk").ObjectContext) => {
        for (const step of ORDER_STEPS) {
          await ctx.run(step, async () => {
            ledger.record(orderKey(ctx.key, step));
          });
        }
      },
    },
  });
  const server = http2.createServer(restate.createEndpointHandler({ services: [order] }));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, LOOPBACK, () => resolve());
  });
  const address = server.address();
  return { server, port: typeof address === "object" && address !== null ? address.port : 0 };
}

async function register(admin: string, endpointPort: number): Promise<void> {
  const response = await fetch(`${admin}/deployments`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ uri: `http://${LOOPBACK}:${endpointPort}` }),
  });
  if (!response.ok) throw new Error(`registering the endpoint failed: ${response.status} ${await response.text()}`);
}

export async function runRestate(options: WorkflowOptions): Promise<WorkflowFigures> {
  const ledger = new CallLedger();
  const dataDir = mkdtempSync(join(tmpdir(), "oncely-bench-restate-"));
  const endpoint = await listenEndpoint(ledger);
  let server: RunningServer | undefined;
  // A signal to this process must not leave the server behind.
  const onSignal = () => {
    server?.process.kill("SIGKILL");
    process.exit(130);
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    server = await startServer(dataDir);
    await register(server.admin, endpoint.port);
    const ingress = server.ingress;
    const { ids, ...measured } = await runWorkload(options, async (id) => {
      const response = await fetch(`${ingress}/order/${encodeURIComponent(id)}/process`, { method: "POST" });
      if (!response.ok) throw new Error(`order ${id}: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
    });
    return {
      system: "Restate",
      orders: options.orders,
      inflight: options.inflight,
      ...measured,
      exactlyOnce: ledger.check(ids),
    };
  } finally {
    if (server !== undefined) await stopServer(server.process);
    endpoint.server.close();
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runAsChild(runRestate);
  // The SDK's HTTP/2 sessions to the stopped server may keep the loop alive a while.
  process.exit(0);
}
