import { age, type Html, html, isoTime } from "../html.js";
import type { ConsoleContext } from "../options.js";

/**
 * The documents where workers keep their slice leases and heartbeats (the same names as the
 * ownership module's `SLICE_LEASES` and `WORKERS`): a lease `{owner, token, until}` per slice,
 * a heartbeat `{until}` per worker. Read here as documents, so the page needs nothing else.
 */
const SLICE_LEASES = "oncely.slice-leases";
const WORKERS = "oncely.workers";

interface Lease {
  slice: number;
  owner: string | null;
  token: number;
  until: number;
  writtenAt: number;
}

/**
 * Which worker owns which slices of actors, and how fresh each lease is: the lease documents and
 * the workers' heartbeats. With none stored, one process owns every slice (no leases are used).
 */
export async function ownershipPage(ctx: ConsoleContext): Promise<Html> {
  const now = ctx.clock.now();
  const leases: Lease[] = (await ctx.journal.listDocuments(SLICE_LEASES))
    .map((d) => {
      const doc = d.doc as Partial<Omit<Lease, "slice" | "writtenAt">>;
      return {
        slice: Number(d.id),
        owner: doc.owner ?? null,
        token: Number(doc.token ?? 0),
        until: Number(doc.until ?? 0),
        writtenAt: d.updatedAt,
      };
    })
    .sort((a, b) => a.slice - b.slice);
  const workers = (await ctx.journal.listDocuments(WORKERS)).map((d) => ({
    id: d.id,
    until: Number((d.doc as { until?: number }).until ?? 0),
    beatAt: d.updatedAt,
  }));
  if (leases.length === 0 && workers.length === 0) {
    return html`<h1>Ownership</h1>
<p class="summary">No slice leases and no worker heartbeats in the journal: a single process owns every slice.</p>`;
  }
  const held = (l: Lease) => l.owner !== null && l.until > now;
  const owned = new Map<string, number[]>();
  for (const l of leases) if (held(l) && l.owner) owned.set(l.owner, [...(owned.get(l.owner) ?? []), l.slice]);
  const unowned = leases.filter((l) => !held(l)).length;
  return html`<h1>Ownership</h1>
<p class="summary">${workers.filter((w) => w.until > now).length} live worker(s); ${leases.length} slice lease(s), ${unowned} not held now (released or expired).</p>
<h2>Workers</h2>
<table class="workers"><thead><tr><th>Worker</th><th>Heartbeat</th><th>Alive until</th><th>Slices owned</th></tr></thead><tbody>
${workers.map((w) => {
  const slices = owned.get(w.id) ?? [];
  return html`<tr data-worker="${w.id}"><td>${w.id}</td><td title="${isoTime(w.beatAt)}">${age(now - w.beatAt)} ago</td>
  <td class="${w.until > now ? "" : "error"}">${w.until > now ? html`${age(w.until - now)} from now` : "lapsed"}</td>
  <td>${slices.length}${slices.length ? html` (${slices.join(", ")})` : ""}</td></tr>`;
})}
</tbody></table>
<h2>Slices</h2>
<table class="slices"><thead><tr><th>Slice</th><th>Owner</th><th>Fencing token</th><th>Lease written</th><th>Expires</th></tr></thead><tbody>
${leases.map(
  (
    l,
  ) => html`<tr data-slice="${l.slice}"><td>${l.slice}</td><td>${l.owner ?? html`<em>released</em>`}</td><td>${l.token}</td>
  <td title="${isoTime(l.writtenAt)}">${age(now - l.writtenAt)} ago</td>
  <td class="${held(l) ? "" : "error"}">${held(l) ? html`in ${age(l.until - now)}` : "not held"}</td></tr>`,
)}
</tbody></table>`;
}
