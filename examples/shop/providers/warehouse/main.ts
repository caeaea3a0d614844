import { z } from "zod";
import { commonConfigShape, loadConfig, number, runProcess } from "../shared/config.js";
import { startWarehouseProvider } from "./server.js";

/**
 * The warehouse as its own process.
 * `tsx examples/shop/providers/warehouse/main.ts --port 4003 --shop-url http://127.0.0.1:3000 --duplicate-rate 0.3`
 * Every flag has an environment twin (`WAREHOUSE_SHOP_URL`, `WAREHOUSE_DUPLICATE_RATE`, ...).
 */
const rate = () => number().pipe(z.number().min(0).max(1)).optional();
const ms = () => number().pipe(z.number().int().min(0)).optional();
const shape = {
  ...commonConfigShape,
  shopUrl: z.url("must be a URL such as http://127.0.0.1:3000").optional(),
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
  const { port, host, seed, ledgerPath, shopUrl, shipDelayMs, ...faults } = loadConfig(
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
    shipDelayMs,
    faults: Object.fromEntries(Object.entries(faults).filter(([, v]) => v !== undefined)),
  });
});
