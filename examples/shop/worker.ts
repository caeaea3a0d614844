import { faultsFromEnv } from "oncely/testing";
import { pino } from "pino";
import { loadShopEnv, ShopConfigError } from "./config.js";
import { whenParentGone } from "./demo/parent-gone.js";
import { shopOptionsFromEnv, startShop } from "./service/shop.js";
import { startTracing } from "./service/tracing.js";

/**
 * The shop as a child process of the demo: like `serve`, but every provider URL must be given
 * (the providers live in the parent, so their ledgers outlive this process), `ONCELY_FAULT` arms
 * fault points (e.g. `dispatch.afterProvider:kill:12` dies in the double-charge window), and it
 * speaks to its parent in JSON lines on stdout: `{ready:true,url,pid}` once listening, and
 * `{stopped:true,stats}` after a clean SIGTERM. A SIGKILL says nothing: that is the point.
 */
let env: ReturnType<typeof loadShopEnv>;
try {
  env = loadShopEnv(process.env);
  const missing = (["PAYMENT_URL", "EMAIL_URL", "WAREHOUSE_URL"] as const).filter((name) => env[name] === undefined);
  if (missing.length > 0) throw new ShopConfigError(missing.map((name) => `${name}: required by the worker`));
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(2);
}
const logger = pino({ level: env.LOG_LEVEL }, pino.destination(2));
const faults = faultsFromEnv(process.env.ONCELY_FAULT);
const stopTracing = await startTracing(process.env, logger);
const shop = await startShop({ ...shopOptionsFromEnv(env), faults, logger });
process.stdout.write(`${JSON.stringify({ ready: true, url: shop.url, pid: process.pid })}\n`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  try {
    // Read before closing: the journal-wide figures need the journal.
    const integration = await shop.contexts.stats().catch(() => null);
    const stats = { runtime: { ...shop.runtime.stats }, dispatcher: { ...shop.host.dispatcher.stats }, integration };
    await shop.close();
    await stopTracing();
    process.stdout.write(`${JSON.stringify({ stopped: true, stats })}\n`);
    process.exit(0);
  } catch (error) {
    logger.error({ err: error }, "worker: clean stop failed");
    process.exit(1);
  }
};
process.once("SIGTERM", () => void stop());
process.once("SIGINT", () => void stop());
// Started by the demo's WorkerProcess, which keeps our stdin open: its end means the parent is gone.
if (process.env.ONCELY_WORKER_PARENT_PIPE === "1") {
  whenParentGone(
    process.stdin,
    () => {
      logger.warn("worker: the parent process is gone (stdin closed); stopping");
      void stop();
    },
    (code) => process.exit(code),
  );
}
