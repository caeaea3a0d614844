import { pino } from "pino";
import { loadShopEnv, ShopConfigError } from "./config.js";
import { AdminTokenRequiredError } from "./service/admin-auth.js";
import { type Shop, shopOptionsFromEnv, startShop, WebhookSecretRequiredError } from "./service/shop.js";
import { startTracing } from "./service/tracing.js";

/**
 * `npm run serve`: the shop alone. Configuration by environment (see config.ts): PORT,
 * DATABASE_URL, PAYMENT_URL, EMAIL_URL, WAREHOUSE_URL, SHOP_URL, ONCELY_ADMIN_TOKEN,
 * WAREHOUSE_WEBHOOK_SECRET, LOG_LEVEL, ... Providers without a URL are started here, as fakes.
 * Without ONCELY_ADMIN_TOKEN the admin token is generated and printed (loopback only).
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
// Before the shop starts, so its first spans are exported (OTEL_EXPORTER_OTLP_ENDPOINT opts in).
const stopTracing = await startTracing(process.env, logger);
let shop: Shop;
try {
  shop = await startShop({ ...shopOptionsFromEnv(env), logger });
} catch (error) {
  if (!(error instanceof AdminTokenRequiredError || error instanceof WebhookSecretRequiredError)) throw error;
  process.stderr.write(`${error.message}\n`);
  process.exit(2);
}
process.stdout.write(
  `shop listening on ${shop.url} (journal: ${shop.journal.backend}; payment ${shop.providerUrls.payment}, ` +
    `email ${shop.providerUrls.email}, warehouse ${shop.providerUrls.warehouse})\n`,
);
// Only ever generated on loopback (startShop refuses otherwise), so printing it shows it to this machine's user.
if (shop.adminTokenGenerated) {
  process.stdout.write(
    `admin token (generated for this run; set ONCELY_ADMIN_TOKEN to choose one): ${shop.adminToken}\n`,
  );
}
process.stdout.write(`operator console: ${shop.url}/console/ (sign in with the admin token)\n`);
const stop = () => {
  void shop
    .close()
    .then(stopTracing)
    .then(() => process.exit(0));
};
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
