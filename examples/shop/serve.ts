import { pino } from "pino";
import { loadShopEnv, ShopConfigError } from "./config.js";
import { shopOptionsFromEnv, startShop } from "./service/shop.js";

/**
 * `npm run serve`: the shop alone. Configuration by environment (see config.ts): PORT,
 * DATABASE_URL, PAYMENT_URL, EMAIL_URL, WAREHOUSE_URL, SHOP_URL, LOG_LEVEL, ...
 * Providers without a URL are started here, as fakes.
 */
let env: ReturnType<typeof loadShopEnv>;
try {
  env = loadShopEnv(process.env);
} catch (error) {
  if (!(error instanceof ShopConfigError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}
const logger = pino({ level: env.LOG_LEVEL }, pino.destination(2));
const shop = await startShop({ ...shopOptionsFromEnv(env), logger });
process.stdout.write(
  `shop listening on ${shop.url} (journal: ${shop.journal.backend}; payment ${shop.providerUrls.payment}, ` +
    `email ${shop.providerUrls.email}, warehouse ${shop.providerUrls.warehouse})\n`,
);
const stop = () => {
  void shop.close().then(() => process.exit(0));
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
