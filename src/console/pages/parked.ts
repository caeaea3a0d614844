import type { ParkedRecord } from "../../journal/types.js";
import { GAP_ALERTS, type GapAlert, isGapResolved } from "../../messaging/gaps.js";
import { age, type Html, html, isoTime, prettyJson } from "../html.js";
import type { ConsoleView } from "../options.js";

/**
 * Parked messages per consumer and source, each source with its checkpoint (the first missing
 * version is checkpoint + 1), and every gap alert raised. The journal lists parked messages per
 * consumer, so the consumers are the configured ones plus those the journal's summary names.
 * Each open gap has a skip form (the missing versions are lost for good) and each consumer a
 * supply form (a missing event's envelope, e.g. fetched from the producer): both act on the
 * journal, and the running consumer's next gap check releases what follows.
 */
export async function parkedPage(ctx: ConsoleView): Promise<Html> {
  const alerts = (await ctx.journal.listDocuments(GAP_ALERTS)).map((d) => d.doc as GapAlert);
  // Consumers with something parked, from one grouped read (never every dead letter or parked row).
  const summary = await ctx.journal.summarize();
  const consumers = [
    ...new Set([
      ...ctx.consumers,
      ...alerts.map((a) => a.consumer),
      ...summary.parked.map((p) => p.consumer),
      ...summary.deadLetters.map((d) => d.consumer),
    ]),
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
      const first = Math.min(...records.filter((r) => r.version > checkpoint).map((r) => r.version));
      const open = Number.isFinite(first) && first > checkpoint + 1;
      rows.push(html`<tr data-source="${source}"><td>${source}</td><td>${checkpoint}</td><td>${missingText(checkpoint, first)}</td>
  <td>${records.map((r) => r.version).join(", ")}</td><td title="${isoTime(oldest)}">${age(now - oldest)}</td>
  <td><details><summary>messages</summary>${records.map((r) => html`<pre>${prettyJson(r.message)}</pre>`)}</details></td>
  <td>${open ? skipForm(ctx, consumer, source, checkpoint + 1, first - 1) : ""}</td></tr>`);
    }
    sections.push(
      html`<h2>${consumer}</h2><table class="parked"><thead><tr><th>Source</th><th>Checkpoint</th><th>Missing</th><th>Parked versions</th><th>Waiting</th><th></th><th></th></tr></thead><tbody>${rows}</tbody></table>
${supplyForm(ctx, consumer)}`,
    );
  }
  const sorted = alerts.sort((a, b) => b.alertedAt - a.alertedAt);
  return html`<h1>Parked messages and gaps</h1>
<p class="summary">${total} message(s) parked behind a gap; ${sorted.filter((a) => !isGapResolved(a.status)).length} gap alert(s) unresolved.</p>
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

function missingText(checkpoint: number, first: number): string {
  if (!Number.isFinite(first)) return "none (applied already; cleared at the next gap check)";
  if (first === checkpoint + 1) return `none (version ${first} is released at the next gap check)`;
  return `${checkpoint + 1}..${first - 1}`;
}

/** Skip an open gap: its missing versions are given up as lost (recorded with the operator). */
function skipForm(ctx: ConsoleView, consumer: string, source: string, from: number, to: number): Html {
  return html`<form class="skip-gap" data-post="${ctx.prefix}/api/gaps/skip" data-confirm="${`Skip versions ${from}..${to} of ${source} for ${consumer} as lost for good?`}">
    <input type="hidden" name="consumer" value="${consumer}">
    <input type="hidden" name="source" value="${source}">
    <label>Operator <input name="by" data-operator required></label>
    <label>Note <input name="note"></label>
    <button>Skip ${from}..${to} as lost</button>
  </form>`;
}

/** Supply a missing event of one of the consumer's gaps: its envelope as JSON. */
function supplyForm(ctx: ConsoleView, consumer: string): Html {
  return html`<form class="supply-gap" data-post="${ctx.prefix}/api/gaps/supply">
    <input type="hidden" name="consumer" value="${consumer}">
    <label>Missing event (its envelope as JSON, with source, aggregateId and aggregateVersion) <textarea name="envelope" rows="6" required></textarea></label>
    <label>Operator <input name="by" data-operator required></label>
    <label>Note <input name="note"></label>
    <button>Supply to ${consumer}</button>
  </form>`;
}
