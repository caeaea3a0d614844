import { z } from "zod";
import { effectRowState } from "../../effects/row-state.js";
import { effectView } from "../../effects/view.js";
import { EFFECT_LIST_STATUSES } from "../../journal/console-queries.js";
import type { OutboxRow } from "../../journal/types.js";
import { cursorParam, filterParams, pager, textParam, timeParam, timeRangeInputs } from "../filters.js";
import { age, type Html, html, query } from "../html.js";
import { type ConsoleContext, pageSize } from "../options.js";
import { parseQuery } from "../validation.js";

export const effectsQuery = z.strictObject({
  status: z
    .enum(EFFECT_LIST_STATUSES as [string, ...string[]], {
      message: `must be one of ${EFFECT_LIST_STATUSES.join(", ")}`,
    })
    .optional()
    .or(z.literal("").transform(() => undefined)),
  kind: textParam(200),
  owner: textParam(500),
  q: textParam(200),
  since: timeParam,
  until: timeParam,
  after: cursorParam,
});

/** How many Unknown effects the first page shows above the list (an operator may be needed for them). */
const UNKNOWN_SHOWN = 20;

/** Open effects by kind and row status, from `journal.summarize()` (done rows are not counted). */
const OPEN_STATUSES = ["pending", "resolving", "reconcile", "dead"] as const;

/**
 * Effects, newest first, one page at a time: filtered by status, kind, owner, text (of the key or
 * the last error) and creation time in the journal's own query (`pageOutbox`), never by reading
 * every row. The first page without a status filter shows the Unknown ones above the list.
 */
export async function effectsPage(ctx: ConsoleContext, raw: unknown): Promise<Html> {
  const filter = parseQuery(effectsQuery, raw);
  const status = filter.status as (typeof EFFECT_LIST_STATUSES)[number] | undefined;
  const base = {
    category: "effect" as const,
    kind: filter.kind,
    stream: filter.owner,
    text: filter.q,
    since: filter.since,
    until: filter.until,
  };
  const page = await ctx.journal.pageOutbox({ ...base, effectStatus: status, after: filter.after, limit: pageSize });
  const showUnknown = status === undefined && filter.after === undefined;
  const unknown = showUnknown
    ? await ctx.journal.pageOutbox({ ...base, effectStatus: "Unknown", limit: UNKNOWN_SHOWN })
    : undefined;
  const summary = await ctx.journal.summarize();
  const counts = new Map<string, Map<string, number>>();
  for (const g of summary.outbox) {
    if (g.category !== "effect") continue;
    const byStatus = counts.get(g.kind) ?? new Map<string, number>();
    byStatus.set(g.status, g.count);
    counts.set(g.kind, byStatus);
  }
  const now = ctx.clock.now();
  const params = filterParams({
    status,
    kind: filter.kind,
    owner: filter.owner,
    q: filter.q,
    since: filter.since,
    until: filter.until,
  });
  return html`<h1>Effects</h1>
<form class="filters" data-get="${ctx.prefix}/effects">
  <label>Status <select name="status"><option value="">any</option>${EFFECT_LIST_STATUSES.map(
    (s) => html`<option${s === status ? html` selected` : ""}>${s}</option>`,
  )}</select></label>
  <label>Kind <input name="kind" value="${filter.kind ?? ""}"></label>
  <label>Owner <input name="owner" value="${filter.owner ?? ""}" placeholder="order/o-1"></label>
  <label>Key or error contains <input name="q" value="${filter.q ?? ""}"></label>
  ${timeRangeInputs(filter.since, filter.until)}
  <button>Filter</button>
</form>
<table class="counts"><thead><tr><th>Open effects by kind</th>${OPEN_STATUSES.map((s) => html`<th>${s}</th>`)}</tr></thead><tbody>
${[...counts]
  .sort(([a], [b]) => (a < b ? -1 : 1))
  .map(
    ([k, byStatus]) =>
      html`<tr><td><a data-nav href="${ctx.prefix}/effects${query({ kind: k })}">${k}</a></td>${OPEN_STATUSES.map(
        (s) => html`<td>${byStatus.get(s) ?? 0}</td>`,
      )}</tr>`,
  )}
</tbody></table>
${
  unknown && unknown.items.length > 0
    ? html`<h2>Unknown now${unknown.next ? html` (the newest ${UNKNOWN_SHOWN})` : ""}</h2>
${effectsTable(ctx, unknown.items, now)}
<p><a data-nav href="${ctx.prefix}/effects${query({ ...params, status: "Unknown" })}">every Unknown effect</a></p>
<h2>All effects, newest first</h2>`
    : ""
}
<p class="summary">${page.items.length} effect(s) on this page${page.next ? ", more on the next" : ""}.</p>
${effectsTable(ctx, page.items, now)}
${pager(ctx, "effects", params, page.next, filter.after !== undefined)}`;
}

function effectsTable(ctx: ConsoleContext, rows: OutboxRow[], now: number): Html {
  return html`<table class="effects"><thead><tr><th>Status</th><th>Key</th><th>Kind</th><th>Owner</th><th>Age</th><th>Attempts</th><th>Lookups</th><th>Last error</th></tr></thead><tbody>
${rows.map((row) => {
  const e = effectView(row);
  const lookups = effectRowState(row).lookups ?? 0;
  return html`<tr class="status-${e.status}" data-key="${e.key}">
  <td><span class="badge ${e.status}">${e.status}</span>${e.needsReconciliation ? html` <a data-nav href="${ctx.prefix}/reconciliation">reconcile</a>` : ""}</td>
  <td><a data-nav href="${ctx.prefix}/timeline${query({ q: e.key })}">${e.key}</a></td>
  <td>${e.kind}</td>
  <td><a data-nav href="${ctx.prefix}/timeline${query({ q: e.owner })}">${e.owner}</a></td>
  <td title="created ${new Date(e.createdAt).toISOString()}">${age(now - e.createdAt)}</td>
  <td>${e.attempts}</td><td>${lookups}</td>
  <td class="error">${e.lastError ?? ""}</td></tr>`;
})}
</tbody></table>`;
}
