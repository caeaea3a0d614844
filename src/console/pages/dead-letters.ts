import { z } from "zod";
import type { DeadLetterRecord } from "../../journal/types.js";
import type { DeadLetterPayload } from "../../messaging/dead-letters.js";
import { requireDeadLetter } from "../actions.js";
import { bulkForms } from "../bulk-forms.js";
import { cursorParam, filterParams, pager, textParam, timeParam, timeRangeInputs } from "../filters.js";
import { age, type Html, html, isoTime, prettyJson, query } from "../html.js";
import { type ConsoleContext, pageSize } from "../options.js";
import { parseQuery } from "../validation.js";

const STATUSES = ["open", "replayed", "discarded"] as const;
export const deadLettersQuery = z.strictObject({
  status: z.enum(STATUSES, { message: `must be one of ${STATUSES.join(", ")}` }).default("open"),
  consumer: textParam(200),
  error: textParam(500),
  since: timeParam,
  until: timeParam,
  after: cursorParam,
});

const reasonOf = (d: DeadLetterRecord) => (d.payload as Partial<DeadLetterPayload> | null)?.reason ?? "";
const short = (text: string) => (text.length > 160 ? `${text.slice(0, 157)}...` : text);

/**
 * Messages a consumer could not handle, latest failure first, one page at a time: filtered by
 * status, consumer, error text and failure time in the journal's own query (`pageDeadLetters`).
 */
export async function deadLettersPage(ctx: ConsoleContext, raw: unknown): Promise<Html> {
  const filter = parseQuery(deadLettersQuery, raw);
  const match = {
    status: filter.status,
    consumer: filter.consumer,
    errorContains: filter.error,
    since: filter.since,
    until: filter.until,
  };
  const page = await ctx.journal.pageDeadLetters({ ...match, after: filter.after, limit: pageSize });
  const total = await ctx.journal.countDeadLetters(match);
  const now = ctx.clock.now();
  const params = filterParams({
    status: filter.status,
    consumer: filter.consumer,
    error: filter.error,
    since: filter.since,
    until: filter.until,
  });
  return html`<h1>Dead letters</h1>
<form class="filters" data-get="${ctx.prefix}/dead-letters">
  <label>Status <select name="status">${STATUSES.map(
    (s) => html`<option${s === filter.status ? html` selected` : ""}>${s}</option>`,
  )}</select></label>
  <label>Consumer <input name="consumer" value="${filter.consumer ?? ""}"></label>
  <label>Error contains <input name="error" value="${filter.error ?? ""}"></label>
  ${timeRangeInputs(filter.since, filter.until)}
  <button>Filter</button>
</form>
<p class="summary">${total} ${filter.status} dead letter(s) match${total > page.items.length ? html`, ${page.items.length} on this page` : ""}</p>
${filter.status === "open" && total > 0 ? bulkForms(ctx, { ...match, total }) : ""}
<table class="dead-letters"><thead><tr><th>Id</th><th>Consumer</th><th>Reason</th><th>Attempts</th><th>Last failed</th><th>Error</th></tr></thead><tbody>
${page.items.map(
  (d) => html`<tr data-id="${d.id}">
  <td><a data-nav href="${ctx.prefix}/dead-letters/${encodeURIComponent(d.id)}">${d.id}</a></td>
  <td>${d.consumer}</td><td>${reasonOf(d)}</td><td>${d.attempts}</td>
  <td title="${isoTime(d.lastFailedAt)}">${age(now - d.lastFailedAt)} ago</td>
  <td class="error">${short(d.error)}</td></tr>`,
)}
</tbody></table>
${pager(ctx, "dead-letters", params, page.next, filter.after !== undefined)}`;
}

/** One dead letter: the message as it arrived, the error and its stack, and the operator's actions. */
export async function deadLetterPage(ctx: ConsoleContext, id: string): Promise<Html> {
  await requireDeadLetter(ctx, id);
  const d = await ctx.deadLetters.show(id);
  const payload = d.payload as Partial<DeadLetterPayload> | null;
  const actions =
    d.status === "open"
      ? html`<div class="actions">
  <form class="replay" data-post="${ctx.prefix}/api/dead-letters/${encodeURIComponent(d.id)}/replay">
    <label>Operator <input name="by" data-operator required></label>
    <label>Note <input name="note"></label>
    <button>Replay</button>
  </form>
  <form class="discard" data-post="${ctx.prefix}/api/dead-letters/${encodeURIComponent(d.id)}/discard" data-confirm="Discard this dead letter for good?">
    <label>Operator <input name="by" data-operator required></label>
    <label>Note <input name="note"></label>
    <button class="danger">Discard</button>
  </form></div>`
      : html`<p>This dead letter was ${d.status} ${d.resolvedAt === null ? "" : isoTime(d.resolvedAt)}.</p>`;
  return html`<h1>Dead letter <code>${d.id}</code></h1>
<p><a data-nav href="${ctx.prefix}/dead-letters${query({ status: d.status })}">all ${d.status} dead letters</a></p>
<dl>
  <dt>Status</dt><dd><span class="badge ${d.status}">${d.status}</span></dd>
  <dt>Consumer</dt><dd>${d.consumer}</dd>
  <dt>Message id</dt><dd>${d.messageId ?? ""}</dd>
  <dt>Reason</dt><dd>${payload?.reason ?? ""}</dd>
  <dt>Subject</dt><dd>${typeof payload?.subject === "string" ? payload.subject : ""}</dd>
  <dt>Attempts</dt><dd>${d.attempts}</dd>
  <dt>First failed</dt><dd>${isoTime(d.firstFailedAt)}</dd>
  <dt>Last failed</dt><dd>${isoTime(d.lastFailedAt)}</dd>
</dl>
${actions}
<h2>Error</h2><pre class="error">${d.error}</pre>
<h2>Stack</h2><pre>${d.stack ?? "(none)"}</pre>
<h2>Payload</h2><pre class="payload">${prettyJson(payload?.envelope ?? payload)}</pre>
${typeof payload?.body === "string" ? html`<h2>Body as delivered</h2><pre class="payload">${payload.body}</pre>` : ""}`;
}
