import { z } from "zod";
import { commonConfigShape, loadConfig, number, runProcess } from "../shared/config.js";
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
