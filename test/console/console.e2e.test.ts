import { createHmac } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Envelope, keyring, signerFor, subjectFor } from "oncely";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../examples/shop/demo/worker-process.js";
import { devKeyId, devShopKeys, type ShopKeys } from "../../examples/shop/integration/keys.js";
import { type PaymentProvider, startPaymentProvider } from "../../examples/shop/providers/payment/server.js";
import { type Shop, type ShopOptions, startShop } from "../../examples/shop/service/shop.js";
import { bearer, callShop } from "../support/shop-http.js";

/**
 * The operator console driven in a real browser (Debian's chromium through playwright-core; no
 * browser is downloaded). The shop runs with its embedded SQLite journal and the in-process
 * transport. Set ONCELY_CONSOLE_SCREENSHOTS=<dir> (`npm run console:screenshots`) to save the
 * main pages as PNG files.
 *
 * 1. A payment provider that does not dedup and answers only after the client gave up (it
 *    charged), with its lookup API down: the payment goes Unknown, then to the reconciliation
 *    queue. The operator sees it in the console, settles it with the paymentId from the
 *    provider's ledger, and the order completes, charged once.
 * 2. An OrderPlaced from another storefront that signs with a rotated key the shop was not given
 *    yet: every consumer dead-letters it. Replay fails while the cause stands; the shop restarts
 *    with the key (the fix), the operator replays each letter from the console, and the order is
 *    charged exactly once.
 */

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SHOTS = process.env.ONCELY_CONSOLE_SCREENSHOTS;
const TOKEN = "console-e2e-admin-token-0123456789";
const SECRET = "console-e2e-webhook-secret-0123";
const OPERATOR = "ada";
const order = { email: "ada@example.com", currency: "EUR", lines: [{ sku: "book", quantity: 2, unitPrice: 1250 }] };

/** The other storefront's new key: unknown to the shop until it is restarted with it. */
const ROTATED = { id: "ordering-2", secret: createHmac("sha256", "console e2e").update("ordering-2").digest() };
const rotatedSigner = signerFor({ ordering: keyring(ROTATED.id, [ROTATED]) });
/** The shop's keys after the fix: the ordering keyring accepts the rotated key too (its own stays current). */
function keysWithRotated(): ShopKeys {
  const dev = devShopKeys();
  return { ...dev, ordering: keyring(devKeyId("ordering"), [...dev.ordering.keys, ROTATED]) };
}

const POISON_ORDER = "ord_partner_1";
const HOSTILE_SKU = "<img src=x onerror=globalThis.__pwned=1>";

let dir: string;
let provider: PaymentProvider;
let shop: Shop;
let shopOptions: ShopOptions;
let browser: Browser;
let page: Page;

async function shot(name: string): Promise<void> {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

const api = (method: string, path: string, body?: unknown) =>
  callShop(shop.url, method, path, body, method === "POST" && path.startsWith("/console") ? bearer(TOKEN) : {});

async function open(path: string): Promise<void> {
  await page.goto(`${shop.url}/console/${path}`);
  await page.locator("#live.ok").waitFor();
}

async function flash(): Promise<string> {
  await page.locator("#flash.ok, #flash.error").waitFor();
  return (await page.locator("#flash").textContent()) ?? "";
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "oncely-console-e2e-"));
  // Charges, then answers after 1.5 s (past the shop's 300 ms timeout); charges again on every
  // request with the same key; its lookup API is down.
  provider = await startPaymentProvider({
    faults: { noIdempotency: true, slowRate: 1, slowMs: 1500, lookupDown: true },
  });
  shopOptions = {
    port: await freePort(),
    databaseUrl: `sqlite:${join(dir, "shop.db")}`,
    dataDir: dir,
    paymentUrl: provider.url,
    paymentDedups: false,
    effectTimeoutMs: 300,
    adminToken: TOKEN,
    webhookSecret: SECRET,
  };
  shop = await startShop(shopOptions);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  page.on("dialog", (dialog) => void dialog.accept());
});

afterAll(async () => {
  await browser?.close();
  await shop?.close();
  await provider?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the operator console in a browser", () => {
  it("asks for the token before showing anything, and every view and action refuses a request without it", async () => {
    await page.goto(`${shop.url}/console/effects`);
    await page.locator("#login-form").waitFor();
    expect(await page.locator("#view").isHidden()).toBe(true);
    const anonymous = await callShop(shop.url, "GET", "/console/api/view/effects");
    expect(anonymous.status).toBe(401);
    const forged = await callShop(shop.url, "POST", "/console/api/reconciliation/settle", { key: "k" });
    expect(forged.status).toBe(401);
    await page.fill("#login-form input[name=token]", "a-wrong-token-of-enough-length");
    await page.fill("#login-form input[name=operator]", OPERATOR);
    await page.click("#login-form button");
    await expect.poll(() => page.locator("#login .message").textContent()).toContain("refused");
    await shot("login");
    await page.fill("#login-form input[name=token]", TOKEN);
    await page.fill("#login-form input[name=operator]", OPERATOR);
    await page.click("#login-form button");
    await page.locator("#view h1", { hasText: "Effects" }).waitFor();
  });

  it("shows an Unknown payment in the reconciliation queue, settles it from the provider's ledger, and the order completes", async () => {
    const placed = await callShop(shop.url, "POST", "/orders", order);
    expect(placed.status).toBe(201);
    const orderId = placed.body.orderId as string;
    const key = `order:${orderId}:payment`;

    await open("reconciliation");
    const card = page.locator(`section.card[data-key="${key}"]`);
    await card.waitFor({ timeout: 60_000 });
    expect(await card.textContent()).toContain(orderId);
    await shot("reconciliation");

    await page.click(`header nav a[href="/console/effects"]`);
    await page.selectOption("form.filters select[name=status]", "Unknown");
    await page.click("form.filters button");
    // The unfiltered first page lists Unknown effects twice (above the list and in it): wait for
    // the filtered page, one table whose every row is Unknown.
    await expect.poll(() => page.url()).toContain("status=Unknown");
    await expect.poll(() => page.locator("table.effects").count()).toBe(1);
    await page.locator(`table.effects tr[data-key="${key}"] .badge.Unknown`).waitFor();
    expect(await page.locator("table.effects tbody .badge:not(.Unknown)").count()).toBe(0);
    await shot("effects");

    // The operator looks the key up in the provider's ledger: it charged (once: the shop never ran it again).
    const charges = provider.ledger.charges.filter((c) => c.idempotencyKey === key);
    expect(charges).toHaveLength(1);
    const paymentId = (charges[0] as { paymentId: string }).paymentId;
    provider.setFaults({ slowRate: 0, lookupDown: false });

    await open("reconciliation");
    // A succeeded payment without the provider's paymentId is refused, naming the field.
    await card.locator("textarea[name=result]").fill('{"id": "nope"}');
    await card.locator("button").click();
    expect(await flash()).toContain("result.paymentId");
    expect(await card.locator("input[name=by]").inputValue()).toBe(OPERATOR);
    await card.locator("select[name=outcome]").selectOption("succeeded");
    await card.locator("textarea[name=result]").fill(JSON.stringify({ paymentId }));
    await card.locator("input[name=note]").fill("found in the provider's ledger");
    await card.locator("button").click();
    await expect.poll(() => page.locator("#flash.ok").textContent()).toContain(`settled ${key} as succeeded by ada`);

    await expect
      .poll(async () => (await api("GET", `/orders/${orderId}`)).body.status, { timeout: 60_000, interval: 250 })
      .toBe("completed");
    expect(provider.ledger.charges.filter((c) => c.idempotencyKey === key)).toHaveLength(1);

    await page.click(`header nav a[href="/console/timeline"]`);
    await page.fill("form.filters input[name=q]", orderId);
    await page.click("form.filters button");
    await page.locator(`section.actor[data-stream="order/${orderId}"]`).waitFor();
    const effectRow = page.locator(`section.actor tr[data-key="${key}"]`);
    await effectRow.locator(".badge.Completed").waitFor();
    // The owner recorded the operator's settlement as an event (who settled it is in the operator actions).
    const owner = page.locator("section.actor", { has: page.locator(`tr[data-key="${key}"]`) });
    const events = (await owner.locator("table.events").textContent()) ?? "";
    expect(events).toContain('"via": "operator"');
    expect(events).toContain(paymentId);
    expect(await page.locator("section.actor").count()).toBeGreaterThanOrEqual(3);
    // The drawing above the tables: a lane per actor, the payment's bar with its Unknown span and
    // the operator's settlement, and arrows between the lanes.
    const drawing = page.locator("svg.timeline");
    for (const lane of ["fulfillment", "order", "payment", "shipment"])
      await drawing.locator(`g.tl-lane[data-stream="${lane}/${orderId}"]`).waitFor();
    expect(await drawing.locator("g.tl-lane").count()).toBe(4);
    const bar = drawing.locator(`g.tl-effect[data-key="${key}"]`);
    expect(await bar.locator("rect.tl-bar.Completed").count()).toBe(1);
    expect(await bar.locator("rect.tl-unknown").count()).toBe(1);
    expect(await bar.locator(".tl-settle title").textContent()).toContain(`settled succeeded by ${OPERATOR}`);
    expect(await drawing.locator("path.tl-arrow:not(.stub)").count()).toBeGreaterThanOrEqual(1);
    await shot("timeline");

    await page.click(`header nav a[href="/console/audit"]`);
    const audit = page.locator("table.audit tbody tr", { hasText: key });
    await audit.waitFor();
    expect(await audit.textContent()).toContain("ada");
  });

  it("dead-letters a poison event, refuses to replay it until its cause is fixed, then replays it and it is consumed once", async () => {
    const poison: Envelope = rotatedSigner.sign({
      eventId: `ordering:${POISON_ORDER}:placed`,
      type: "OrderPlaced",
      source: "ordering",
      aggregateId: POISON_ORDER,
      aggregateVersion: 1,
      occurredAt: new Date().toISOString(),
      correlationId: POISON_ORDER,
      causationId: `place:${POISON_ORDER}`,
      payload: {
        orderId: POISON_ORDER,
        currency: "EUR",
        amount: 990,
        lines: [{ sku: HOSTILE_SKU, quantity: 1, unitPrice: 990 }],
      },
    });
    await shop.transport.publish(poison, subjectFor("shop", { source: "ordering", type: "OrderPlaced" }));
    // Every consumer subscribed to shop.ordering.* refuses it: ordering, payment, fulfillment, the two views.
    await expect.poll(async () => (await shop.journal.listDeadLetters({ status: "open" })).length).toBe(5);

    await open("dead-letters");
    await page.locator("table.dead-letters tbody tr").nth(4).waitFor();
    await shot("dead-letters");
    const paymentLetter = page.locator("table.dead-letters tbody tr", { hasText: "payment" }).first();
    await paymentLetter.locator("a").click();
    await page.locator("form.replay").waitFor();
    const detail = (await page.locator("#view").textContent()) ?? "";
    expect(detail).toContain("unknown-key");
    expect(detail).toContain(HOSTILE_SKU); // shown as text...
    expect(await page.locator("#view img").count()).toBe(0); // ...never as markup
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    await shot("dead-letter");

    // The cause stands: replay is refused with the reason, and the letter stays open.
    await page.click("form.replay button");
    expect(await flash()).toContain("unknown-key");
    expect(provider.ledger.charges.filter((c) => c.orderId === POISON_ORDER)).toHaveLength(0);

    // The fix: the shop is given the storefront's new key (a restart with the new keyring).
    await shop.close();
    shop = await startShop({ ...shopOptions, signingKeys: keysWithRotated() });

    // After the fix, every letter of that cause at once: filtered by its error, counted (the page's
    // count is the dry run), replayed in bulk, one operator action per letter.
    await open("dead-letters");
    await page.fill("form.filters input[name=error]", "unknown-key");
    await page.click("form.filters button");
    await page.locator("p.summary", { hasText: "5 open dead letter(s) match" }).waitFor();
    await page.click("details.bulk summary");
    await shot("dead-letters-bulk");
    await page.click("form.bulk-replay button");
    expect(await flash()).toContain("replayed 5 of 5 matching dead letter(s)");
    await open("dead-letters");
    expect(await page.locator("table.dead-letters tbody tr").count()).toBe(0);
    expect((await shop.journal.listDeadLetters({ status: "replayed" })).length).toBe(5);

    // Consumed once: the payment context charged the storefront's order one time, and it stays so.
    await expect
      .poll(() => provider.ledger.charges.filter((c) => c.orderId === POISON_ORDER).length, { timeout: 30_000 })
      .toBe(1);
    const letters = await shop.journal.listDeadLetters({ status: "replayed" });
    const again = await api("POST", `/console/api/dead-letters/${encodeURIComponent(letters[0]?.id ?? "")}/replay`, {
      by: OPERATOR,
    });
    expect(again.status).toBe(400);
    expect(again.body.error).toContain("already replayed");
    expect(provider.ledger.charges.filter((c) => c.orderId === POISON_ORDER)).toHaveLength(1);

    await open("audit");
    expect(await page.locator("table.audit tbody tr", { hasText: "replay" }).count()).toBe(5);
    await shot("audit");
  });

  it("filters effects by status and shows consumer lag and ownership", async () => {
    await open("effects?status=Completed");
    await page.locator("table.effects .badge.Completed").first().waitFor();
    expect(await page.locator("table.effects .badge.Pending").count()).toBe(0);
    await open("lag");
    await page.locator("#view h1", { hasText: "Consumer lag" }).waitFor();
    expect(await page.locator("#view").textContent()).toContain("Parked behind a gap");
    await shot("lag");
    await open("ownership");
    await page.locator("#view h1", { hasText: "Ownership" }).waitFor();
    expect(await page.locator("#view").textContent()).toContain("a single process owns every slice");
  });
});
