import { z } from "zod";
import { commonConfigShape, loadConfig, number, runProcess } from "../shared/config.js";
import { MIN_WEBHOOK_SECRET_LENGTH } from "../shared/webhook-signature.js";
import { startWarehouseProvider } from "./server.js";

/**
 * The warehouse as its own process.
 * `WAREHOUSE_WEBHOOK_SECRET=… tsx examples/shop/providers/warehouse/main.ts --port 4003 --shop-url http://127.0.0.1:3000`
 * Every flag has an environment twin (`WAREHOUSE_SHOP_URL`, `WAREHOUSE_DUPLICATE_RATE`, ...). The
 * webhook secret is required, best given by environment (a flag shows in `ps`); the shop reads the
 * same variable, `WAREHOUSE_WEBHOOK_SECRET`.
 */
const rate = () => number().pipe(z.number().min(0).max(1)).optional();
const ms = () => number().pipe(z.number().int().min(0)).optional();
const shape = {
  ...commonConfigShape,
  shopUrl: z.url("must be a URL such as http://127.0.0.1:3000").optional(),
  webhookSecret: z
    .string({ message: "is required: the secret the shop verifies webhooks with" })
    .min(MIN_WEBHOOK_SECRET_LENGTH, `must be at least ${MIN_WEBHOOK_SECRET_LENGTH} characters`),
  shipDelayMs: ms(),
  failRate: rate(),
  slowRate: rate(),
  slowMs: ms(),
  dropAfterRate: rate(),
  duplicateRate: rate(),
  lateRate: rate(),
  lateMs: ms(),
};

await runProcess("warehouse", () => {
  const { port, host, seed, ledgerPath, shopUrl, webhookSecret, shipDelayMs, ...faults } = loadConfig(
    "warehouse",
    shape,
    process.argv.slice(2),
    process.env,
  );
  return startWarehouseProvider({
    port,
    host,
    seed,
    ledgerPath,
    shopUrl,
    webhookSecret,
    shipDelayMs,
    faults: Object.fromEntries(Object.entries(faults).filter(([, v]) => v !== undefined)),
  });
});
