import { z } from "zod";
import {
  boolean,
  commonConfigShape,
  commonSettingHelp,
  exitWithUsageIfAsked,
  loadConfig,
  number,
  runProcess,
  type SettingHelp,
  usage,
} from "../shared/config.js";
import { startPaymentProvider } from "./server.js";

/**
 * The payment provider as its own process.
 * `tsx examples/shop/providers/payment/main.ts --port 4001 --decline-rate 0.1 --ledger-path data/payment.jsonl`
 * Every flag has an environment twin (`PAYMENT_DECLINE_RATE`, `PAYMENT_NO_IDEMPOTENCY`, ...).
 */
const rate = () => number().pipe(z.number().min(0).max(1)).optional();
const shape = {
  ...commonConfigShape,
  failRate: rate(),
  slowRate: rate(),
  slowMs: number().pipe(z.number().int().min(0)).optional(),
  dropAfterRate: rate(),
  declineRate: rate(),
  noIdempotency: boolean().optional(),
  lookupDown: boolean().optional(),
  declineAmountsEndingWith: z.string().regex(/^\d+$/, "must be digits").optional(),
};

const help: SettingHelp<typeof shape> = {
  ...commonSettingHelp,
  failRate: "fraction of requests answered 5xx without doing anything (0-1)",
  slowRate: "fraction of requests done, then answered only after --slow-ms (0-1)",
  slowMs: "how late a slow answer comes, in ms (past the client's timeout)",
  dropAfterRate: "fraction of requests done, then the connection dropped without an answer (0-1)",
  declineRate: "fraction of charges declined with 402 (0-1)",
  noIdempotency: "true: ignore Idempotency-Key, so the same key charges (or refunds) again every time",
  lookupDown: "true: GET /payments?idempotencyKey= answers 503 (only an operator can settle)",
  declineAmountsEndingWith: "decline every amount whose digits end with these digits, e.g. 13",
};

exitWithUsageIfAsked(process.argv.slice(2), () =>
  usage(
    "payment",
    "The fake payment provider: POST /payments and /refunds with Idempotency-Key, lookup by key, GET /ledger, POST /faults.",
    shape,
    help,
  ),
);

await runProcess("payment", () => {
  const { port, host, seed, ledgerPath, declineAmountsEndingWith, ...faults } = loadConfig(
    "payment",
    shape,
    process.argv.slice(2),
    process.env,
  );
  return startPaymentProvider({
    port,
    host,
    seed,
    ledgerPath,
    declineAmountsEndingWith,
    faults: Object.fromEntries(Object.entries(faults).filter(([, v]) => v !== undefined)),
  });
});
