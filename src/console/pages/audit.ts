import { listActions } from "../audit.js";
import { type Html, html, isoTime } from "../html.js";
import type { ConsoleView } from "../options.js";
import { describeSettlement, settlementStates } from "../settlements.js";

/**
 * Every settle, retry, replay, discard, revive and gap skip or supply, from the console or the CLI, with who took it. A
 * settlement shows what became of it: waiting for a dispatcher, recorded by the owner, or
 * refused with the reason.
 */
export async function auditPage(ctx: ConsoleView): Promise<Html> {
  const actions = await listActions(ctx.journal);
  const states = await settlementStates(ctx.journal, actions);
  return html`<h1>Operator actions</h1>
<table class="audit"><thead><tr><th>When</th><th>Operator</th><th>Action</th><th>Target</th><th>Outcome</th><th>Via</th><th>Note</th></tr></thead><tbody>
${actions.map((a) => {
  const state = states.get(a.id);
  const outcome = a.action === "settle" ? describeSettlement(a, state) : a.outcome;
  const refused = state?.state === "refused" ? "error" : "";
  return html`<tr data-action="${a.id}"><td>${isoTime(a.at)}</td><td>${a.by}</td><td>${a.action}</td><td>${a.target}</td><td class="${refused}">${outcome}</td><td>${a.via ?? ""}</td><td>${a.note ?? ""}</td></tr>`;
})}
</tbody></table>`;
}
