import type { ParkedRecord } from "../../journal/types.js";
import { GAP_ALERTS, type GapAlert } from "../../messaging/gaps.js";
import { age, type Html, html, isoTime, prettyJson } from "../html.js";
import type { ConsoleContext } from "../options.js";

/**
 * Parked messages per consumer and source, each source with its checkpoint (the first missing
 * version is checkpoint + 1), and every gap alert raised. The journal lists parked messages per
 * consumer, so the consumers are the configured ones plus those named by gap alerts and dead letters.
 */
export async function parkedPage(ctx: ConsoleContext): Promise<Html> {
  const alerts = (await ctx.journal.listDocuments(GAP_ALERTS)).map((d) => d.doc as GapAlert);
  const letters = await ctx.journal.listDeadLetters({});
  const consumers = [
    ...new Set([...ctx.consumers, ...alerts.map((a) => a.consumer), ...letters.map((d) => d.consumer)]),
  ].sort();
  const now = ctx.clock.now();
  const sections: Html[] = [];
  let total = 0;
  for (const consumer of consumers) {
    const parked = await ctx.journal.listParked(consumer);
    if (parked.length === 0) continue;
    total += parked.length;
    const bySource = new Map<string, ParkedRecord[]>();
    for (const p of parked) bySource.set(p.source, [...(bySource.get(p.source) ?? []), p]);
    const rows: Html[] = [];
    for (const [source, records] of bySource) {
      const checkpoint = await ctx.journal.getCheckpoint(consumer, source);
      const oldest = Math.min(...records.map((r) => r.parkedAt));
      rows.push(html`<tr><td>${source}</td><td>${checkpoint}</td><td>${checkpoint + 1}</td>
  <td>${records.map((r) => r.version).join(", ")}</td><td title="${isoTime(oldest)}">${age(now - oldest)}</td>
  <td><details><summary>messages</summary>${records.map((r) => html`<pre>${prettyJson(r.message)}</pre>`)}</details></td></tr>`);
    }
    sections.push(
      html`<h2>${consumer}</h2><table class="parked"><thead><tr><th>Source</th><th>Checkpoint</th><th>Missing from</th><th>Parked versions</th><th>Waiting</th><th></th></tr></thead><tbody>${rows}</tbody></table>`,
    );
  }
  const sorted = alerts.sort((a, b) => b.alertedAt - a.alertedAt);
  return html`<h1>Parked messages and gaps</h1>
<p class="summary">${total} message(s) parked behind a gap; ${sorted.filter((a) => a.status === "open" || a.status === "waiting" || a.status === "hook-failed").length} gap alert(s) unresolved.</p>
${sections}
<h2>Gap alerts</h2>
<table class="gaps"><thead><tr><th>Consumer</th><th>Source</th><th>Missing</th><th>Parked</th><th>Opened</th><th>Alerted</th><th>Status</th><th>Note</th></tr></thead><tbody>
${sorted.map(
  (
    a,
  ) => html`<tr><td>${a.consumer}</td><td>${a.source}</td><td>${a.fromVersion}..${a.toVersion}</td><td>${a.parkedVersions.join(", ")}</td>
  <td>${isoTime(a.openedAt)}</td><td>${isoTime(a.alertedAt)}</td><td><span class="badge ${a.status}">${a.status}</span></td><td>${a.note ?? ""}</td></tr>`,
)}
</tbody></table>`;
}
