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

const help: SettingHelp<typeof shape> = {
  ...commonSettingHelp,
  shopUrl: "the shop's base URL, where shipment webhooks go (POST {url}/webhooks/warehouse)",
  webhookSecret: "required: the secret webhooks are signed with (the shop reads the same WAREHOUSE_WEBHOOK_SECRET)",
  shipDelayMs: "how long after accepting a picklist it ships, in ms (default 50)",
  failRate: "fraction of requests answered 5xx without doing anything (0-1)",
  slowRate: "fraction of requests done, then answered only after --slow-ms (0-1)",
  slowMs: "how late a slow answer comes, in ms (past the client's timeout)",
  dropAfterRate: "fraction of requests done, then the connection dropped without an answer (0-1)",
  duplicateRate: "fraction of shipments whose webhook is delivered a second time, same eventId (0-1)",
  lateRate: "fraction of shipments whose webhook is held back --late-ms after shipping (0-1)",
  lateMs: "how long a late webhook is held back, in ms",
};

exitWithUsageIfAsked(process.argv.slice(2), () =>
  usage(
    "warehouse",
    "The fake warehouse: POST /picklists with Idempotency-Key, lookup by key, cancellations, webhooks to the shop, GET /ledger, POST /faults.",
    shape,
    help,
  ),
);

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
