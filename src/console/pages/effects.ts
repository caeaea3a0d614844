import { z } from "zod";
import { effectRowState } from "../../effects/row-state.js";
import type { EffectStatus, EffectView } from "../../effects/types.js";
import { effectView } from "../../effects/view.js";
import { age, type Html, html, query } from "../html.js";
import { type ConsoleView, pageSize } from "../options.js";
import { parseQuery } from "../validation.js";

const STATUSES = ["Pending", "Unknown", "Completed", "Failed"] as const;

export const effectsQuery = z.strictObject({
  status: z.enum(STATUSES, { message: `must be one of ${STATUSES.join(", ")}` }).optional(),
  kind: z.string().max(200).optional(),
  owner: z.string().max(500).optional(),
});

/** Unknown first (an operator may be needed), then Pending, then the final ones; oldest first within each. */
const RANK: Record<EffectStatus, number> = { Unknown: 0, Pending: 1, NotRequested: 2, Failed: 3, Completed: 4 };

type Row = EffectView & { lookups: number };

/** Effects by status and kind, with age, attempts and lookups: what is stuck, and since when. */
export async function effectsPage(ctx: ConsoleView, raw: unknown): Promise<Html> {
  const filter = parseQuery(effectsQuery, raw);
  const kind = filter.kind || undefined;
  const owner = filter.owner || undefined;
  const rows = await ctx.journal.listOutbox({
    category: "effect",
    ...(kind === undefined ? {} : { kind }),
    ...(owner === undefined ? {} : { stream: owner }),
  });
  const all: Row[] = rows.map((row) => ({ ...effectView(row), lookups: effectRowState(row).lookups ?? 0 }));
  const counts = new Map<string, Map<EffectStatus, number>>();
  for (const e of all) {
    const byStatus = counts.get(e.kind) ?? new Map<EffectStatus, number>();
    byStatus.set(e.status, (byStatus.get(e.status) ?? 0) + 1);
    counts.set(e.kind, byStatus);
  }
  const shown = all
    .filter((e) => filter.status === undefined || e.status === filter.status)
    .sort((a, b) => RANK[a.status] - RANK[b.status] || a.createdAt - b.createdAt);
  const now = ctx.clock.now();
  const link = (params: Record<string, string | undefined>) => `${ctx.prefix}/effects${query(params)}`;
  return html`<h1>Effects</h1>
<form class="filters" data-get="${ctx.prefix}/effects">
  <label>Status <select name="status"><option value="">any</option>${STATUSES.map(
    (s) => html`<option${s === filter.status ? html` selected` : ""}>${s}</option>`,
  )}</select></label>
  <label>Kind <input name="kind" value="${kind ?? ""}"></label>
  <label>Owner <input name="owner" value="${owner ?? ""}" placeholder="order/o-1"></label>
  <button>Filter</button>
</form>
<table class="counts"><thead><tr><th>Kind</th>${STATUSES.map((s) => html`<th>${s}</th>`)}</tr></thead><tbody>
${[...counts]
  .sort(([a], [b]) => (a < b ? -1 : 1))
  .map(
    ([k, byStatus]) =>
      html`<tr><td>${k}</td>${STATUSES.map(
        (s) => html`<td><a data-nav href="${link({ status: s, kind: k, owner })}">${byStatus.get(s) ?? 0}</a></td>`,
      )}</tr>`,
  )}
</tbody></table>
<p class="summary">${shown.length} effect(s)${shown.length > pageSize ? html`, the first ${pageSize} shown` : ""}</p>
<table class="effects"><thead><tr><th>Status</th><th>Key</th><th>Kind</th><th>Owner</th><th>Age</th><th>Attempts</th><th>Lookups</th><th>Last error</th></tr></thead><tbody>
${shown.slice(0, pageSize).map(
  (e) => html`<tr class="status-${e.status}" data-key="${e.key}">
  <td><span class="badge ${e.status}">${e.status}</span>${e.needsReconciliation ? html` <a data-nav href="${ctx.prefix}/reconciliation">reconcile</a>` : ""}</td>
  <td><a data-nav href="${ctx.prefix}/timeline${query({ q: e.key })}">${e.key}</a></td>
  <td>${e.kind}</td>
  <td><a data-nav href="${ctx.prefix}/timeline${query({ q: e.owner })}">${e.owner}</a></td>
  <td title="created ${new Date(e.createdAt).toISOString()}">${age(now - e.createdAt)}</td>
  <td>${e.attempts}</td><td>${e.lookups}</td>
  <td class="error">${e.lastError ?? ""}</td></tr>`,
)}
</tbody></table>`;
}
