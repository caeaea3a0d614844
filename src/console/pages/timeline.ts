import { z } from "zod";
import { CONSOLE_DEFAULTS } from "../../base/defaults.js";
import { effectRowState, messageRowState } from "../../effects/row-state.js";
import { effectView } from "../../effects/view.js";
import { MAX_PAGE } from "../../journal/console-queries.js";
import type { EventReader, OutboxReader, OutboxRow, ParkedRecord } from "../../journal/types.js";
import { listActions } from "../audit.js";
import { type Html, html, isoTime, prettyJson, query } from "../html.js";
import type { ConsoleView } from "../options.js";
import { layoutTimeline } from "../timeline/layout.js";
import { publishedAtCommitRows } from "../timeline/published-rows.js";
import { type ActorRecords, buildStory, type StoryInput } from "../timeline/story.js";
import { timelineLegend, timelineSvg } from "../timeline/svg.js";
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

/**
 * An actor's history, or an order's across its actors: first drawn (one lane per actor, time left
 * to right: `../timeline/`), then as tables: per actor its events, its effects, the messages it
 * sent and the integration events it published.
 */
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
  const actors: ActorRecords[] = [];
  for (const stream of streams) actors.push(await readActor(ctx, stream));
  // Events their own commits published (the journal transport's publish at commit) have no row.
  const logged = await publishedAtCommitRows(ctx.journal, actors, CONSOLE_DEFAULTS.streamScanLimit);
  for (const actor of actors) {
    const rows = logged.get(actor.stream);
    if (rows) actor.published = [...actor.published, ...rows];
  }
  const story = buildStory({ actors, ...(await aroundTheStory(ctx, actors)), now: ctx.clock.now() });
  const drawing = html`<figure class="timeline">${timelineSvg(layoutTimeline(story))}<figcaption>${timelineLegend()}</figcaption></figure>`;
  return html`${form}<p class="summary">${streams.length} actor(s) for "${q}"</p>${drawing}${actors.map((a) => actorSection(ctx, a, row?.id))}`;
}

const limit = CONSOLE_DEFAULTS.timelineLimit;
/** Dead letters are looked for among those that failed from this long before the story to this long after it. */
const DEAD_LETTER_MARGIN_MS = 3_600_000;

async function readActor(ctx: ConsoleView, stream: string): Promise<ActorRecords> {
  const { journal } = ctx;
  return {
    stream,
    events: await journal.readStream(stream, 1, limit),
    effects: await journal.listOutbox({ category: "effect", stream, limit }),
    messages: await journal.listOutbox({ category: "message", stream, limit }),
    published: await journal.listOutbox({ category: "event", stream, limit }),
  };
}

/**
 * What the drawing marks besides the actors' own rows: operator settlements, dead letters and
 * parked messages of the story's messages. No store indexes dead letters by message, so the
 * latest `MAX_PAGE` that failed around the story are read and kept when they concern it; parked
 * messages are read for the sources the story published from.
 */
async function aroundTheStory(
  ctx: ConsoleView,
  actors: readonly ActorRecords[],
): Promise<Pick<StoryInput, "actions" | "deadLetters" | "parked">> {
  const { journal } = ctx;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const a of actors) {
    for (const e of a.events) [first, last] = [Math.min(first, e.recordedAt), Math.max(last, e.recordedAt)];
    for (const r of [...a.effects, ...a.messages, ...a.published])
      [first, last] = [Math.min(first, r.createdAt), Math.max(last, r.updatedAt)];
  }
  const actions = await listActions(journal, CONSOLE_DEFAULTS.streamScanLimit);
  const deadLetters =
    first > last
      ? []
      : (
          await journal.pageDeadLetters({
            since: first - DEAD_LETTER_MARGIN_MS,
            until: last + DEAD_LETTER_MARGIN_MS,
            limit: MAX_PAGE,
          })
        ).items;
  const sources = new Set(
    actors.flatMap((a) =>
      a.published.flatMap((r) => {
        const p = (r.payload ?? {}) as { source?: unknown; aggregateId?: unknown };
        return typeof p.source === "string" && typeof p.aggregateId === "string"
          ? [`${p.source}/${p.aggregateId}`]
          : [];
      }),
    ),
  );
  const parked: ParkedRecord[] = [];
  for (const p of (await journal.consumerPositions()).parked)
    if (sources.has(p.source)) parked.push(...(await journal.listParked(p.consumer, p.source)));
  return { actions, deadLetters, parked };
}

function actorSection(ctx: ConsoleView, actor: ActorRecords, highlight: string | undefined): Html {
  const { stream, events, effects, messages, published } = actor;
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

function outboxTable(rows: readonly OutboxRow[], outcome: (row: OutboxRow) => string): Html {
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
