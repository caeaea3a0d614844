import cliProgress from "cli-progress";
import { Command, InvalidArgumentError } from "commander";
import { FAULT_LEVELS, type FaultLevel } from "./faults.js";
import { auditClean, formatResult } from "./print.js";
import {
  DEMO_CANCEL_RATE,
  DEMO_OUT_OF_STOCK_RATE,
  DEMO_SHORT_SHIP_RATE,
  type DemoProgress,
  runDemo,
} from "./run-demo.js";

/**
 * `npm start`: the demonstration. Places orders through the shop's HTTP API while its worker is
 * killed and its providers misbehave, then audits what the providers really did.
 * Exit code 0 when every invariant holds, 1 when one fails, 2 for bad flags.
 */
const integer = (name: string, min: number, max: number) => (value: string) => {
  if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError(`${name} must be a whole number, got "${value}"`);
  const n = Number(value);
  if (n < min || n > max) throw new InvalidArgumentError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
};

const rate = (name: string) => (value: string) => {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0 || n > 1) {
    throw new InvalidArgumentError(`${name} must be a number from 0 to 1, got "${value}"`);
  }
  return n;
};

const program = new Command()
  .name("npm start --")
  .description("oncely shop demo: orders under crashes and provider faults, audited from the providers' ledgers")
  .option("--orders <n>", "orders to place", integer("--orders", 1, 100_000), 200)
  .option("--seed <s>", "seed of every random choice (same seed, same faults)", integer("--seed", 0, 2 ** 31 - 1), 1)
  .option(
    "--faults <level>",
    `fault level: ${FAULT_LEVELS.join("|")}`,
    (value: string) => {
      if (!(FAULT_LEVELS as readonly string[]).includes(value)) {
        throw new InvalidArgumentError(`--faults must be one of ${FAULT_LEVELS.join(", ")}, got "${value}"`);
      }
      return value as FaultLevel;
    },
    "heavy" as FaultLevel,
  )
  .option("--db <url>", "PostgreSQL URL (postgres://…); default: embedded SQLite data/demo.db", (value: string) => {
    if (!/^postgres(ql)?:\/\/.+/.test(value)) {
      throw new InvalidArgumentError(`--db must be a postgres:// URL, got "${value}"`);
    }
    return value;
  })
  .option(
    "--transport <kind>",
    "transport of integration events: in-process (with injected duplicates, delays, reordering) or nats",
    (value: string) => {
      if (value !== "in-process" && value !== "nats") {
        throw new InvalidArgumentError(`--transport must be in-process or nats, got "${value}"`);
      }
      return value;
    },
    "in-process",
  )
  .option("--nats-url <url>", "NATS server for --transport nats", "nats://127.0.0.1:4222")
  .option(
    "--cancel-rate <r>",
    "fraction of orders cancelled at a random moment (before payment, before the picklist, around the shipment)",
    rate("--cancel-rate"),
    DEMO_CANCEL_RATE,
  )
  .option(
    "--out-of-stock-rate <r>",
    "fraction of picklists the warehouse refuses for good (out of stock): refunded",
    rate("--out-of-stock-rate"),
    DEMO_OUT_OF_STOCK_RATE,
  )
  .option(
    "--short-ship-rate <r>",
    "fraction of accepted picklists of which the warehouse reports lines it cannot ship, then ships the rest: those lines refunded",
    rate("--short-ship-rate"),
    DEMO_SHORT_SHIP_RATE,
  )
  .option("--payment-no-idempotency", "the payment provider charges on every request: ambiguous charges are looked up")
  .option(
    "--workers <n>",
    "worker processes sharing the journal (kills hit a random one)",
    integer("--workers", 1, 16),
    1,
  )
  .option(
    "--pg-restart-ms <ms>",
    "with --db: terminate every worker connection to PostgreSQL about this often",
    integer("--pg-restart-ms", 100, 600_000),
  )
  .option("--kills <n>", "most worker kills in the run (default: the fault level's)", integer("--kills", 0, 10_000))
  .option("--duration <s>", "stop placing new orders after this many seconds", integer("--duration", 1, 86_400))
  .option(
    "--partition",
    "workers on network namespaces of their own (root, iproute2; needs --db or --chaos): the last one is cut off from PostgreSQL for 6 s, then from NATS for 6 s, each healed; needs root",
  )
  .option(
    "--chaos",
    "chaos run defaults: 3 workers, up to 20 kills, PostgreSQL (postgres://postgres@127.0.0.1:5432/test unless --db), NATS, connection restarts every 2 s",
  )
  .exitOverride((error) => {
    process.exit(error.exitCode === 0 ? 0 : 2);
  });
program.parse();
const opts = program.opts<{
  orders: number;
  seed: number;
  faults: FaultLevel;
  db?: string;
  paymentNoIdempotency?: boolean;
  transport: "in-process" | "nats";
  natsUrl: string;
  workers: number;
  pgRestartMs?: number;
  duration?: number;
  kills?: number;
  chaos?: boolean;
  partition?: boolean;
  cancelRate: number;
  outOfStockRate: number;
  shortShipRate: number;
}>();
// --chaos only changes defaults: every flag given explicitly still wins.
if (opts.chaos) {
  const defaulted = (name: string) => program.getOptionValueSource(name) === "default";
  if (defaulted("workers")) opts.workers = 3;
  opts.kills ??= 20;
  opts.db ??= "postgres://postgres@127.0.0.1:5432/test";
  if (defaulted("transport")) opts.transport = "nats";
  opts.pgRestartMs ??= 2000;
}
if (opts.partition && !opts.db) {
  process.stderr.write("--partition needs --db postgres://… (or --chaos): a worker is cut off from PostgreSQL\n");
  process.exit(2);
}
if (opts.pgRestartMs !== undefined && !opts.db) {
  process.stderr.write("--pg-restart-ms needs --db postgres://… (there is no connection to restart with SQLite)\n");
  process.exit(2);
}

const tty = process.stdout.isTTY === true;
const bar = tty
  ? new cliProgress.SingleBar(
      {
        format:
          " {bar} {value}/{total} orders ended | {phase} | placed {placed} | kills {kills} | pg restarts {pgRestarts} | attention {attention}",
        hideCursor: true,
      },
      cliProgress.Presets.shades_classic,
    )
  : undefined;
let lastLine = "";
let lastAt = 0;
const onProgress = (p: DemoProgress) => {
  if (bar) {
    if (p.phase === "starting") bar.start(p.total, 0, { ...p });
    else bar.update(p.terminal, { ...p });
    if (p.phase === "done") bar.stop();
    return;
  }
  // Not a terminal: a plain line when something changed, at most every 2 s (and always the last).
  const line = `${p.phase}: ${p.terminal}/${p.total} ended, ${p.placed} placed, ${p.kills} kills, ${p.pgRestarts} pg restarts, ${p.attention} attention`;
  if (line !== lastLine && (Date.now() - lastAt > 2000 || p.phase === "done" || p.phase === "auditing")) {
    process.stdout.write(`${line}\n`);
    lastLine = line;
    lastAt = Date.now();
  }
};

try {
  const result = await runDemo({
    ...opts,
    pgConnectionRestartMs: opts.pgRestartMs,
    durationMs: opts.duration === undefined ? undefined : opts.duration * 1000,
    onProgress,
    // On a terminal the progress bar owns the line: the cuts are in the final report instead.
    onPartitionEvent: (line) => {
      if (!bar) process.stdout.write(`partition: ${line}\n`);
    },
  });
  bar?.stop();
  process.stdout.write(`${formatResult(result, opts)}\n`);
  process.exit(auditClean(result.report) ? 0 : 1);
} catch (error) {
  bar?.stop();
  process.stderr.write(`demo failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
