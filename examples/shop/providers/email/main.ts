import { z } from "zod";
import {
  commonConfigShape,
  commonSettingHelp,
  exitWithUsageIfAsked,
  loadConfig,
  number,
  runProcess,
  type SettingHelp,
  usage,
} from "../shared/config.js";
import { startEmailProvider } from "./server.js";

/**
 * The email provider as its own process.
 * `tsx examples/shop/providers/email/main.ts --port 4002 --fail-rate 0.1`
 * Every flag has an environment twin (`EMAIL_FAIL_RATE`, `EMAIL_SLOW_MS`, ...).
 */
const rate = () => number().pipe(z.number().min(0).max(1)).optional();
const shape = {
  ...commonConfigShape,
  failRate: rate(),
  slowRate: rate(),
  slowMs: number().pipe(z.number().int().min(0)).optional(),
  dropAfterRate: rate(),
};

const help: SettingHelp<typeof shape> = {
  ...commonSettingHelp,
  failRate: "fraction of requests answered 5xx without doing anything (0-1)",
  slowRate: "fraction of requests done, then answered only after --slow-ms (0-1)",
  slowMs: "how late a slow answer comes, in ms (past the client's timeout)",
  dropAfterRate: "fraction of requests done, then the connection dropped without an answer (0-1)",
};

exitWithUsageIfAsked(process.argv.slice(2), () =>
  usage(
    "email",
    "The fake email provider: POST /emails with Idempotency-Key, lookup by key, GET /ledger, POST /faults.",
    shape,
    help,
  ),
);

await runProcess("email", () => {
  const { port, host, seed, ledgerPath, ...faults } = loadConfig("email", shape, process.argv.slice(2), process.env);
  return startEmailProvider({
    port,
    host,
    seed,
    ledgerPath,
    faults: Object.fromEntries(Object.entries(faults).filter(([, v]) => v !== undefined)),
  });
});
