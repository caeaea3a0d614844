import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import type { Ledgers } from "../../examples/shop/demo/ledgers.js";
import { type Shop, type ShopOptions, startShop } from "../../examples/shop/service/shop.js";
import { type Answer, callShop } from "./shop-http.js";

/**
 * The shop with its in-process providers and a SQLite journal in a temporary folder, started before
 * the file's tests and closed (folder removed) after them. `call` talks to the shop, `ledger` reads
 * a provider's own ledger: the ground truth the tests compare with.
 */
export function useTempShop(prefix: string, options: Partial<ShopOptions> = {}) {
  let dir: string | undefined;
  let shop: Shop | undefined;
  const started = (): Shop => {
    if (!shop) throw new Error("the shop is not started yet (use it inside a test)");
    return shop;
  };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `oncely-shop-${prefix}-`));
    shop = await startShop({
      port: 0,
      databaseUrl: `sqlite:${join(dir, "shop.db")}`,
      dataDir: dir,
      effectTimeoutMs: 1000,
      ...options,
    });
  });
  afterAll(async () => {
    await shop?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return {
    shop: started,
    call: (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> =>
      callShop(started().url, method, path, body, headers),
    ledger: async <K extends keyof Ledgers>(provider: K): Promise<Ledgers[K]> =>
      (await fetch(`${started().providerUrls[provider]}/ledger`)).json() as Promise<Ledgers[K]>,
  };
}
