import { effectRowState } from "../../effects/row-state.js";
import { age, type Html, html, isoTime, prettyJson, query } from "../html.js";
import type { ConsoleContext } from "../options.js";

/** Effects whose outcome stayed Unknown after their lookups, each with a settle form. */
export async function reconciliationPage(ctx: ConsoleContext): Promise<Html> {
  const items = await ctx.reconciliation.list();
  // The lookups tried before it came here: the queue's items do not carry them, the rows do.
  const rows = await ctx.journal.listOutbox({ category: "effect", status: "reconcile" });
  const lookups = new Map(rows.map((row) => [row.id, effectRowState(row).lookups ?? 0]));
  const now = ctx.clock.now();
  return html`<h1>Reconciliation queue</h1>
<p class="summary">${items.length} effect(s) wait for an operator. Look each one up at the provider by its key, then record what really happened.</p>
${items.map(
  (item) => html`<section class="card" data-key="${item.key}">
  <h2><a data-nav href="${ctx.prefix}/timeline${query({ q: item.key })}">${item.key}</a></h2>
  <dl>
    <dt>Kind</dt><dd>${item.kind}</dd>
    <dt>Owner</dt><dd><a data-nav href="${ctx.prefix}/timeline${query({ q: item.owner })}">${item.owner}</a></dd>
    <dt>Unknown since</dt><dd>${item.unknownSince === null ? "" : html`${isoTime(item.unknownSince)} (${age(now - item.unknownSince)} ago)`}</dd>
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
</section>`,
)}`;
}
