import { consumerLag } from "../../messaging/consumer-lag.js";
import { age, type Html, html, isoTime, query } from "../html.js";
import type { ConsoleContext } from "../options.js";

/**
 * How far behind each consumer is: readers of the journal's published log against its head, the
 * broker's pending count of each subscription the console was given, and per source what waits
 * parked behind a gap (from one `journal.consumerPositions()` read).
 */
export async function lagPage(ctx: ConsoleContext): Promise<Html> {
  const lag = await consumerLag(ctx.journal, ctx.subscriptions);
  const now = ctx.clock.now();
  const none = lag.log.length === 0 && lag.broker.length === 0;
  return html`<h1>Consumer lag</h1>
<h2>Behind the log</h2>
${
  none
    ? html`<p class="summary">No reader of the journal's published log, and no subscription given to the console (option <code>subscriptions</code>).</p>`
    : html`<table class="lag"><thead><tr><th>Consumer</th><th>Source</th><th>Position</th><th>Head</th><th>Behind</th><th>Moved</th></tr></thead><tbody>
${lag.log.map(
  (
    r,
  ) => html`<tr data-consumer="${r.consumer}"><td>${r.consumer}</td><td>published log</td><td>${r.position}</td><td>${r.head}</td>
  <td class="${r.behind > 0 ? "behind" : ""}">${r.behind}</td><td title="${isoTime(r.updatedAt)}">${age(now - r.updatedAt)} ago</td></tr>`,
)}
${lag.broker.map(
  (b) => html`<tr data-consumer="${b.consumer}"><td>${b.consumer}</td><td>broker</td><td></td><td></td>
  <td class="${b.pending ? "behind" : ""}">${b.pending === null ? html`<span class="error">unknown: ${b.error ?? ""}</span>` : b.pending}</td><td></td></tr>`,
)}
</tbody></table>`
}
<h2>Parked behind a gap</h2>
${
  lag.parked.length === 0
    ? html`<p class="summary">Nothing parked.</p>`
    : html`<table class="lag-parked"><thead><tr><th>Consumer</th><th>Source</th><th>Checkpoint</th><th>First parked</th><th>Parked</th><th>Oldest waits</th></tr></thead><tbody>
${lag.parked.map(
  (p) => html`<tr data-consumer="${p.consumer}" data-source="${p.source}"><td>${p.consumer}</td>
  <td><a data-nav href="${ctx.prefix}/timeline${query({ q: p.source })}">${p.source}</a></td><td>${p.checkpoint}</td><td>${p.firstParkedVersion}</td>
  <td>${p.count}</td><td title="${isoTime(p.oldestParkedAt)}">${age(now - p.oldestParkedAt)}</td></tr>`,
)}
</tbody></table>
<p><a data-nav href="${ctx.prefix}/parked">parked messages and gaps</a></p>`
}`;
}
