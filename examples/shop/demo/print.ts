import type { AuditReport } from "./audit.js";
import type { DemoResult } from "./run-demo.js";

/** The audit as text a newcomer reads top to bottom: what happened, what was checked, pass or fail. */
export function formatResult(result: DemoResult, options: { orders: number; seed: number; faults: string }): string {
  const r = result.report;
  const lines: string[] = [];
  const add = (...texts: string[]) => lines.push(...(texts.length === 0 ? [""] : texts));
  const seconds = (result.durationMs / 1000).toFixed(1);
  add();
  add(
    `oncely shop demo — ${r.orders.placed} orders, ${result.workers} worker${result.workers > 1 ? "s" : ""}, faults ${options.faults}, seed ${options.seed}, journal ${result.backend}, transport ${result.integration.transport}, ${seconds} s`,
  );
  add("Audit from the providers' own ledgers (GET /ledger), compared with the shop's order views.");
  add();
  add("Orders by final status");
  for (const [status, n] of Object.entries(r.orders.byStatus).sort()) add(`  ${status.padEnd(16)} ${n}`);
  const answers = Object.entries(result.cancels.answers)
    .sort()
    .map(([status, n]) => `${n} × ${status}`);
  add(
    `  cancels sent (rate ${result.cancels.rate}): ${answers.join(", ") || "none"} (202 cancelled, 200 already cancelled, 409 shipped first)`,
  );
  add();
  add("What the providers did");
  add(
    `  payment    ${r.charges.total} charges, ${r.charges.declines} declines, ${r.refunds.total} refunds (${r.refunds.amount} of ${r.refunds.charged} charged, minor units); orders by number of charges: ${histogram(r.charges.perOrder)}`,
  );
  add(`  email      ${r.emails.total} emails under ${r.emails.keys} keys (most under one key: ${r.emails.maxPerKey})`);
  add(
    `  warehouse  ${r.picklists.total} picklists for ${r.picklists.orders} orders (most per order: ${r.picklists.maxPerOrder}), ${r.shipments.total} shipments (most per order: ${r.shipments.maxPerOrder}), ${r.picklists.stockouts} refused out of stock, ${r.picklists.shortShipped} shipped short (lines reported unavailable), ${r.picklists.cancelled} orders' picklists cancelled, ${r.shipments.shippedBeforeCancel} shipped before the cancel`,
  );
  add();
  add("Duplicates suppressed");
  add(
    `  webhook deliveries beyond the first per eventId (warehouse ledger): ${r.duplicates.webhookDeliveriesBeyondFirst}; shipments recorded twice by the shop: ${r.duplicates.webhookDuplicatesRecordedTwice}`,
  );
  add(
    `  orders posted again with the same Idempotency-Key, answered with the same order: ${r.duplicates.clientReplaysAnswered} (client retries after errors: ${r.duplicates.clientRetries})`,
  );
  add(
    `  commands answered from an actor's inbox instead of handled again: at least ${r.duplicates.inboxDuplicatesAtLeast}`,
  );
  add(
    `  provider calls repeated with the same key after an ambiguous answer: at least ${r.duplicates.sameKeyRetriesAtLeast}`,
  );
  add(
    "  (the last two are the workers' own counters, polled every 300 ms: a killed worker's final counts are lost, hence \"at least\")",
  );
  add();
  const i = result.integration;
  add(`Integration events between the contexts (transport ${i.transport})`);
  add(
    i.injected
      ? `  injected misdelivery: duplicates ${Math.round(i.injected.duplicateRate * 100)}%, delays up to ${i.injected.maxDelayMs} ms, shuffled in windows of ${i.injected.reorderWindow}`
      : "  injected misdelivery: none (a real broker: redelivery after kills, republish after a relay crash)",
  );
  add(`  published (by their own commits on the journal transport, else by the relay): ${i.published}`);
  add(`  handed over at commit to the publishing worker's consumers: ${i.handedOver}`);
  add(`  duplicates suppressed by the consumers' inboxes: at least ${i.duplicatesSuppressedAtLeast}`);
  add(
    `  parked ahead of a gap (timeline, sequenced): at least ${i.parkedAtLeast}, released in order: at least ${i.releasedAtLeast}; still parked at the end: ${i.parkedAtEnd}`,
  );
  add(`  gaps alerted (open past the timeout, then supplied from the producer): ${i.gapsAlerted}`);
  add(`  dead letters: ${i.deadLetters}`);
  add();
  add("Unknown outcomes (effects that went Unknown at least once, from the order histories)");
  if (r.unknown.total === 0) add("  none");
  else
    add(
      `  ${r.unknown.total}, settled by: ${Object.entries(r.unknown.byVia)
        .map(([via, n]) => `${via} ${n}`)
        .join(", ")}`,
    );
  add(`  settled by the demo acting as operator (reading the provider's ledger): ${r.operator.length}`);
  for (const s of r.operator.slice(0, 10)) add(`    ${s.key}: ${s.outcome} (${s.evidence})`);
  add();
  add(result.workers > 1 ? `Workers (${result.workers} processes sharing the journal)` : "Worker");
  add(
    `  incarnations ${r.worker.incarnations}; SIGKILLs survived: ${r.worker.killedByParent} at random moments + ${r.worker.killedAtFaultPoint} right after a provider answered (dispatch.afterProvider)`,
  );
  if (result.pgRestarts > 0) {
    add(`  PostgreSQL connection restarts survived (every worker connection terminated): ${result.pgRestarts}`);
  }
  add(`  worker warnings: ${result.workerLog}`);
  add();
  if (result.partitions.length > 0) {
    add(...partitionLines(result));
    add();
  }
  add(...throughputLines(result));
  add();
  add("Invariants");
  for (const check of r.checks) {
    add(`  ${check.ok ? "PASS" : "FAIL"}  ${check.name}: ${check.description}`);
    for (const v of check.violations.slice(0, 5)) add(`          ${v}`);
    if (check.violations.length > 5) add(`          … and ${check.violations.length - 5} more`);
  }
  add();
  if (result.timedOut) add("Gave up waiting: not every order ended in time.");
  add(r.violated.length === 0 ? "Audit clean." : `Audit FAILED: ${r.violated.join(", ")}`);
  return lines.join("\n");
}

/** What was cut when (from the start of placing orders), and what the cut worker did meanwhile. */
function partitionLines(result: DemoResult): string[] {
  const lines = [
    "Network partitions (each worker on its own network namespace; a cut drops the link: no reset, no error)",
  ];
  for (const p of result.partitions) {
    lines.push(
      `  worker ${p.worker + 1} cut off from ${p.link} at ${(p.cutAtMs / 1000).toFixed(1)} s (${p.atCut.placed} placed, ${p.atCut.terminal} ended), healed at ${(p.healedAtMs / 1000).toFixed(1)} s (${p.atHeal.placed} placed, ${p.atHeal.terminal} ended)`,
      `    while cut: ${p.retransmitsWhileCut} TCP retransmits in its namespace, ${p.packetsDroppedWhileCut} packets dropped on the link, ${p.bytesWhileCut} bytes crossed it; after the heal: ${p.bytesAfterHeal} bytes reached ${p.link}`,
    );
  }
  return lines;
}

/** Orders/s end to end: wall-clock figures of one run on this machine, so only as steady as the machine. */
function throughputLines(result: DemoResult): string[] {
  const t = result.throughput;
  const { arrivalMs, inFlight, maxOpen } = result.arrival;
  const pace = arrivalMs > 0 ? `one order every ${arrivalMs} ms at most` : "as fast as the shop accepts them";
  const open = Number.isFinite(maxOpen) ? `, at most ${maxOpen} orders unfinished` : "";
  if (!t) return ["Throughput (end to end)", "  no order ended: nothing to measure"];
  return [
    "Throughput (end to end)",
    `  ${t.orders} orders ended in ${t.seconds.toFixed(1)} s: ${t.ordersPerSecond.toFixed(1)} orders/s (first order placed → last order terminal)`,
    `  per order, placed → terminal: p50 ${Math.round(t.p50Ms)} ms, p99 ${Math.round(t.p99Ms)} ms`,
    `  client: ${pace}, ${inFlight} requests in flight${open}${arrivalMs > 0 ? " (the pace, not the shop, may bound orders/s)" : ""}`,
  ];
}

const histogram = (perOrder: Record<string, number>) =>
  Object.entries(perOrder)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([charges, orders]) => `${charges}→${orders}`)
    .join(", ");

export const auditClean = (report: AuditReport) => report.violated.length === 0;
