import { z } from "zod";
import { boolean, commonConfigShape, loadConfig, number, runProcess } from "../shared/config.js";
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
