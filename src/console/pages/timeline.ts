import { z } from "zod";
import { CONSOLE_DEFAULTS } from "../../base/defaults.js";
import { effectRowState, messageRowState } from "../../effects/row-state.js";
import { effectView } from "../../effects/view.js";
import type { EventReader, OutboxReader, OutboxRow } from "../../journal/types.js";
import { type Html, html, isoTime, prettyJson, query } from "../html.js";
import type { ConsoleView } from "../options.js";
import { parseQuery } from "../validation.js";

export const timelineQuery = z.strictObject({ q: z.string().trim().max(500).optional() });

/** Most actors one search shows (an order id names an order, its payment, its shipment...). */
const MAX_ACTORS = 20;

/**
 * The actors a search names: the owner of an effect key (or of any outbox row id), an actor
 * address as it is, or every actor whose address ends with `/<q>` (an order id).
 */
export async function resolveActors(
  journal: Pick<EventReader, "streamVersion" | "listStreams"> & Pick<OutboxReader, "getOutbox">,
  q: string,
): Promise<{ streams: string[]; row?: OutboxRow }> {
  const row = await journal.getOutbox(q);
  if (row) return { streams: [row.stream], row };
  if ((await journal.streamVersion(q)) > 0) return { streams: [q] };
  const all = await journal.listStreams("", CONSOLE_DEFAULTS.streamScanLimit);
  return { streams: all.filter((s) => s.endsWith(`/${q}`)).slice(0, MAX_ACTORS) };
}

/** An actor's history: its events, its effects, the messages it sent and received, the integration events it published. */
export async function timelinePage(ctx: ConsoleView, raw: unknown): Promise<Html> {
  const q = parseQuery(timelineQuery, raw).q ?? "";
  const form = html`<h1>Timeline</h1>
<form class="filters" data-get="${ctx.prefix}/timeline">
  <label>Actor address, effect key or order id <input name="q" value="${q}" size="40" placeholder="order/o-1, order:o-1:payment, o-1"></label>
  <button>Search</button>
</form>`;
  if (q === "") return form;
  const { streams, row } = await resolveActors(ctx.journal, q);
  if (streams.length === 0) return html`${form}<p class="summary">No actor, effect key or order id matches "${q}".</p>`;
  const sections: Html[] = [];
  for (const stream of streams) sections.push(await actorSection(ctx, stream, row?.id));
  return html`${form}<p class="summary">${streams.length} actor(s) for "${q}"</p>${sections}`;
}

const limit = CONSOLE_DEFAULTS.timelineLimit;

async function actorSection(ctx: ConsoleView, stream: string, highlight: string | undefined): Promise<Html> {
  const { journal } = ctx;
  const events = await journal.readStream(stream, 1, limit);
  const effects = await journal.listOutbox({ category: "effect", stream, limit });
  const messages = await journal.listOutbox({ category: "message", stream, limit });
  const published = await journal.listOutbox({ category: "event", stream, limit });
  return html`<section class="actor" data-stream="${stream}">
<h2>${stream}</h2>
<h3>Events (${events.length})</h3>
<table class="events"><thead><tr><th>#</th><th>Recorded</th><th>Type</th><th>Caused by (message or event id)</th><th>Data</th></tr></thead><tbody>
${events.map(
  (
    e,
  ) => html`<tr><td>${e.version}</td><td>${isoTime(e.recordedAt)}</td><td>${e.type}</td><td>${e.causationId ?? ""}</td>
  <td><details><summary>${summary(e.data)}</summary><pre>${prettyJson(e.data)}</pre></details></td></tr>`,
)}
</tbody></table>
<h3>Effects (${effects.length})</h3>
<table class="effects"><thead><tr><th>Key</th><th>Kind</th><th>Status</th><th>Attempts</th><th>Lookups</th><th>Last run</th><th>Unknown since</th><th>Outcome</th><th>Last error</th></tr></thead><tbody>
${effects.map((r) => {
  const view = effectView(r);
  const state = effectRowState(r);
  const settledBy =
    state.pending?.via === "operator" ? ` (settled by ${state.pending.by ?? "?"}, not yet recorded)` : "";
  return html`<tr class="${r.id === highlight ? "highlight" : ""}" data-key="${r.id}"><td>${r.id}</td><td>${r.kind}</td>
  <td><span class="badge ${view.status}">${view.status}</span>${settledBy}</td><td>${r.attempts}</td><td>${state.lookups ?? 0}</td>
  <td>${isoTime(state.lastRunAt ?? null)}</td><td>${isoTime(state.unknownSince ?? null)}</td>
  <td>${r.outcome ?? ""}${r.status === "done" ? html`<details><summary>result</summary><pre>${prettyJson(r.result)}</pre></details>` : ""}</td>
  <td class="error">${r.lastError ?? ""}</td></tr>`;
})}
</tbody></table>
<h3>Messages sent (${messages.length})</h3>
${outboxTable(messages, (r) => {
  const ack = messageRowState(r).ack;
  return r.outcome ?? ack?.outcome ?? "";
})}
<h3>Integration events published (${published.length})</h3>
${outboxTable(published, (r) => r.outcome ?? "")}
<p><a data-nav href="${ctx.prefix}/effects${query({ owner: stream })}">effects of ${stream}</a></p>
</section>`;
}

function outboxTable(rows: OutboxRow[], outcome: (row: OutboxRow) => string): Html {
  return html`<table class="outbox"><thead><tr><th>Id</th><th>Kind</th><th>Status</th><th>Outcome</th><th>Attempts</th><th>Created</th><th>Payload</th></tr></thead><tbody>
${rows.map(
  (
    r,
  ) => html`<tr><td>${r.id}</td><td>${r.kind}</td><td>${r.status}</td><td>${outcome(r)}</td><td>${r.attempts}</td><td>${isoTime(r.createdAt)}</td>
  <td><details><summary>${summary(r.payload)}</summary><pre>${prettyJson(r.payload)}</pre></details></td></tr>`,
)}
</tbody></table>`;
}

/** The first characters of a value's JSON, for a collapsed cell. */
function summary(value: unknown): string {
  const text = prettyJson(value).replace(/\s+/g, " ");
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
