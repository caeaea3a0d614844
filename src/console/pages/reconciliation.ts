import { z } from "zod";
import { type ReconciliationItem, reconciliationItem } from "../../effects/reconciliation.js";
import { effectRowState } from "../../effects/row-state.js";
import { cursorParam, filterParams, pager, textParam, timeParam, timeRangeInputs } from "../filters.js";
import { age, type Html, html, isoTime, prettyJson, query } from "../html.js";
import { type ConsoleContext, pageSize } from "../options.js";
import { parseQuery } from "../validation.js";

export const reconciliationQuery = z.strictObject({
  kind: textParam(200),
  owner: textParam(500),
  q: textParam(200),
  since: timeParam,
  until: timeParam,
  after: cursorParam,
});

/** Why an item waits here, in the operator's words. */
function causeText(item: ReconciliationItem): string {
  if (item.cause === "unknown") return "outcome Unknown: the provider may have acted; look it up before settling";
  return item.neverPerformed
    ? "retries exhausted: the provider never acted (every run was answered not performed); settle it failed, or retry it"
    : "retries exhausted, but an earlier run was ambiguous: look it up before settling failed, or retry it (same key)";
}

/**
 * Effects waiting for an operator: their outcome stayed Unknown after their lookups, or their
 * retries were exhausted. Each with a settle form; an exhausted one also with a retry form.
 */
export async function reconciliationPage(ctx: ConsoleContext, raw: unknown): Promise<Html> {
  const filter = parseQuery(reconciliationQuery, raw);
  const page = await ctx.journal.pageOutbox({
    category: "effect",
    status: ["reconcile"],
    kind: filter.kind,
    stream: filter.owner,
    text: filter.q,
    since: filter.since,
    until: filter.until,
    after: filter.after,
    limit: pageSize,
  });
  const waiting = (await ctx.journal.summarize()).outbox
    .filter((g) => g.category === "effect" && g.status === "reconcile")
    .reduce((n, g) => n + g.count, 0);
  const items = page.items.map(reconciliationItem);
  // The lookups tried before it came here: the queue's items do not carry them, the rows do.
  const lookups = new Map(page.items.map((row) => [row.id, effectRowState(row).lookups ?? 0]));
  const now = ctx.clock.now();
  const params = filterParams({
    kind: filter.kind,
    owner: filter.owner,
    q: filter.q,
    since: filter.since,
    until: filter.until,
  });
  return html`<h1>Reconciliation queue</h1>
<form class="filters" data-get="${ctx.prefix}/reconciliation">
  <label>Kind <input name="kind" value="${filter.kind ?? ""}"></label>
  <label>Owner <input name="owner" value="${filter.owner ?? ""}" placeholder="order/o-1"></label>
  <label>Key or error contains <input name="q" value="${filter.q ?? ""}"></label>
  ${timeRangeInputs(filter.since, filter.until)}
  <button>Filter</button>
</form>
<p class="summary">${waiting} effect(s) wait for an operator${items.length < waiting ? html`; ${items.length} on this page, newest first` : ""}. Look each one up at the provider by its key, then record what really happened (or, when its retries were exhausted, retry it).</p>
${items.map(
  (item) => html`<section class="card" data-key="${item.key}">
  <h2><a data-nav href="${ctx.prefix}/timeline${query({ q: item.key })}">${item.key}</a></h2>
  <dl>
    <dt>Kind</dt><dd>${item.kind}</dd>
    <dt>Owner</dt><dd><a data-nav href="${ctx.prefix}/timeline${query({ q: item.owner })}">${item.owner}</a></dd>
    <dt>Why here</dt><dd class="cause" data-cause="${item.cause}">${causeText(item)}</dd>
    <dt>${item.cause === "unknown" ? "Unknown since" : "In the queue since"}</dt><dd>${item.unknownSince === null ? "" : html`${isoTime(item.unknownSince)} (${age(now - item.unknownSince)} ago)`}</dd>
    <dt>Attempts</dt><dd>${item.attempts}</dd>
    <dt>Lookups</dt><dd>${lookups.get(item.key) ?? 0}</dd>
    <dt>Last error</dt><dd class="error">${item.lastError ?? ""}</dd>
  </dl>
  <h3>Input</h3><pre>${prettyJson(item.input)}</pre>
  <form class="settle" data-post="${ctx.prefix}/api/reconciliation/settle">
    <input type="hidden" name="key" value="${item.key}">
    <label>Outcome <select name="outcome"><option value="succeeded">succeeded (the provider acted)</option><option value="failed">failed (it did not)</option></select></label>
    <label>Result (JSON, with succeeded) <textarea name="result" rows="3" placeholder='{"id": "…"}'></textarea></label>
    <label>Reason (with failed) <input name="reason"></label>
    <label>Operator <input name="by" data-operator required></label>
    <label>Note <input name="note"></label>
    <button>Settle</button>
  </form>
  ${
    item.cause === "retries-exhausted"
      ? html`<form class="retry" data-post="${ctx.prefix}/api/reconciliation/retry">
    <input type="hidden" name="key" value="${item.key}">
    <label>Operator <input name="by" data-operator required></label>
    <label>Note <input name="note"></label>
    <button>Retry with the same key</button>
  </form>`
      : ""
  }
</section>`,
)}
${pager(ctx, "reconciliation", params, page.next, filter.after !== undefined)}`;
}
