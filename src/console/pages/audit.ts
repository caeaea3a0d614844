import { listActions } from "../audit.js";
import { type Html, html, isoTime } from "../html.js";
import type { ConsoleContext } from "../options.js";

/** Every settle, replay and discard taken in the console, with who took it. */
export async function auditPage(ctx: ConsoleContext): Promise<Html> {
  const actions = await listActions(ctx.journal);
  return html`<h1>Operator actions</h1>
<table class="audit"><thead><tr><th>When</th><th>Operator</th><th>Action</th><th>Target</th><th>Outcome</th><th>Note</th></tr></thead><tbody>
${actions.map(
  (a) =>
    html`<tr><td>${isoTime(a.at)}</td><td>${a.by}</td><td>${a.action}</td><td>${a.target}</td><td>${a.outcome}</td><td>${a.note ?? ""}</td></tr>`,
)}
</tbody></table>`;
}
