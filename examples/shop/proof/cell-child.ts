import { faultsFromEnv } from "oncely/testing";
import { startShop } from "../service/shop.js";
import { cellOrders, driveOrders } from "./drive.js";

/**
 * One incarnation of a crash-matrix worker (a child process): the shop on the given journal and
 * providers, `ONCELY_FAULT=point:kill:N` arming the point where it dies by SIGKILL. Prints
 * `{"done":true}` once every order is terminal.
 */
const env = process.env;
const required = (name: string): string => {
  const value = env[name];
  if (!value) {
    process.stderr.write(`cell-child: ${name} is required\n`);
    process.exit(2);
  }
  return value;
};
const shop = await startShop({
  port: Number(required("PORT")),
  databaseUrl: required("DATABASE_URL"),
  paymentUrl: required("PAYMENT_URL"),
  emailUrl: required("EMAIL_URL"),
  warehouseUrl: required("WAREHOUSE_URL"),
  webhookSecret: required("WAREHOUSE_WEBHOOK_SECRET"),
  effectTimeoutMs: Number(env.EFFECT_TIMEOUT_MS ?? 500),
  dispatcherOwner: `matrix-child-${process.pid}`,
  faults: faultsFromEnv(env.ONCELY_FAULT),
  publishAtCommit: env.PUBLISH_AT_COMMIT !== "0",
});
await driveOrders(shop.runtime, cellOrders(Number(required("ORDERS"))), Number(env.CELL_TIMEOUT_MS ?? 60_000));
process.stdout.write(`${JSON.stringify({ done: true })}\n`);
await shop.close();
process.exit(0);
