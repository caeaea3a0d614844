import { age, type Html, html, isoTime } from "../html.js";
import { BREAK_PX, LABEL_PX } from "./axis.js";
import type { EffectBar, LaneBox, TimelineLayout } from "./layout.js";

/**
 * The timeline layout as inline SVG, every text through the escaping `html` tag. Colours come from
 * classes in the console's stylesheet (the page's CSP allows no inline `style`), and each mark
 * carries a `<title>` (its hover text, read by screen readers). Pattern and marker references are
 * presentation attributes pointing into this SVG's own `<defs>`.
 */

const LABEL_CHARS = 30;
/** Coordinates with one decimal keep the markup small. */
const n = (x: number) => Math.round(x * 10) / 10;

export function timelineSvg(layout: TimelineLayout): Html {
  const { plot } = layout;
  const summary = `${layout.lanes.length} actor(s), ${layout.marks.reduce((s, m) => s + m.ids.length, 0)} event(s), ${layout.bars.length + layout.bundles.reduce((s, b) => s + b.keys.length, 0)} effect(s), ${layout.arrows.reduce((s, a) => s + a.ids.length, 0)} message and event arrow(s), from ${isoTime(layout.from)} to ${isoTime(layout.to)}`;
  return html`<svg class="timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${layout.width} ${n(layout.height)}" width="${layout.width}" height="${n(layout.height)}" role="img" aria-labelledby="tl-title tl-desc">
<title id="tl-title">Timeline</title><desc id="tl-desc">${summary}</desc>
<defs>
<marker id="tl-head" class="tl-head" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L8,4 L0,8 z"/></marker>
<pattern id="tl-hatch" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><rect class="tl-hatch-bg" width="6" height="6"/><rect class="tl-hatch-line" width="3" height="6"/></pattern>
<pattern id="tl-parked-hatch" patternUnits="userSpaceOnUse" width="5" height="5" patternTransform="rotate(-45)"><rect class="tl-parked-bg" width="5" height="5"/><rect class="tl-parked-line" width="2" height="5"/></pattern>
</defs>
<text class="tl-range" x="8" y="14">UTC ${isoTime(layout.from).slice(0, 10)}</text>
<g class="tl-axis">
${layout.ticks.map(
  (t) =>
    html`<line class="tl-tick" x1="${n(t.x)}" y1="${plot.top - 6}" x2="${n(t.x)}" y2="${n(plot.bottom)}"/><text class="tl-tick-label" x="${n(t.x)}" y="${plot.top - 10}">${t.label}</text>`,
)}
${layout.breaks.map(
  (b, i) =>
    html`<g class="tl-break"><title>${age(b.ms)} with nothing to draw, cut out of the axis</title><rect x="${n(b.x + 2)}" y="${plot.top - 6}" width="${BREAK_PX - 4}" height="${n(plot.bottom - plot.top + 6)}"/>${i === 0 || b.x - (layout.breaks[i - 1]?.x ?? 0) >= LABEL_PX ? html`<text x="${n(b.x + BREAK_PX / 2)}" y="${plot.top - 10}">≈${age(b.ms)}</text>` : ""}</g>`,
)}
</g>
${layout.lanes.map((lane) => laneSvg(layout, lane))}
<g class="tl-arrows">
${layout.arrows.map(
  (a) =>
    html`<path class="tl-arrow ${a.category}${a.to === null ? " stub" : ""}${a.ids.length > 1 ? " many" : ""}" data-from="${a.from}" data-to="${a.to ?? ""}" d="${arrowPath(a.x1, a.y1, a.x2, a.y2)}" marker-end="url(#tl-head)"><title>${a.title}</title></path>`,
)}
</g>
</svg>`;
}

function laneSvg(layout: TimelineLayout, lane: LaneBox): Html {
  const label = lane.stream.length > LABEL_CHARS ? `${lane.stream.slice(0, LABEL_CHARS - 1)}…` : lane.stream;
  const mine = <T extends { lane: number }>(items: readonly T[]) => items.filter((i) => i.lane === lane.index);
  return html`<g class="tl-lane" data-stream="${lane.stream}">
<rect class="tl-lane-bg${lane.index % 2 === 1 ? " odd" : ""}" x="0" y="${n(lane.y)}" width="${layout.width}" height="${n(lane.height)}"/>
<text class="tl-lane-label" x="8" y="${n(lane.markY + 4)}"><title>${lane.stream}</title>${label}</text>
<line class="tl-lane-line" x1="${layout.plot.left}" y1="${n(lane.markY)}" x2="${layout.plot.right}" y2="${n(lane.markY)}"/>
${mine(layout.parked).map(
  (p) =>
    html`<rect class="tl-parked" x="${n(p.x1)}" y="${n(p.y)}" width="${n(p.x2 - p.x1)}" height="5" fill="url(#tl-parked-hatch)"><title>${p.title}</title></rect>`,
)}
${mine(layout.bars).map(barSvg)}
${mine(layout.bundles).map(
  (b) =>
    html`<g class="tl-bundle"><title>${b.title}</title><rect x="${n(b.x)}" y="${n(b.y - 5)}" width="16" height="10" rx="2"/><text x="${n(b.x + 8)}" y="${n(b.y + 3)}">${b.keys.length}</text></g>`,
)}
${mine(layout.marks).map((m) =>
  m.ids.length === 1
    ? html`<circle class="tl-event" cx="${n(m.x)}" cy="${n(m.y)}" r="4"><title>${m.title}</title></circle>`
    : html`<g class="tl-agg"><title>${m.title}</title><circle cx="${n(m.x)}" cy="${n(m.y)}" r="${m.ids.length > 9 ? 8 : 6.5}"/><text x="${n(m.x)}" y="${n(m.y + 3)}">${m.ids.length > 999 ? "999+" : m.ids.length}</text></g>`,
)}
${mine(layout.dead).map(
  (d) =>
    html`<path class="tl-dead" d="M${n(d.x - 4)},${n(d.y - 4)} l8,8 m0,-8 l-8,8"><title>${d.title}</title></path>${d.ids.length > 1 ? html`<text class="tl-dead-count" x="${n(d.x + 6)}" y="${n(d.y)}">${d.ids.length}</text>` : ""}`,
)}
</g>`;
}

function barSvg(b: EffectBar): Html {
  const mid = b.y + b.height / 2;
  return html`<g class="tl-effect" data-key="${b.key}">
<rect class="tl-bar ${b.status}${b.open ? " open" : ""}" x="${n(b.x1)}" y="${n(b.y)}" width="${n(b.x2 - b.x1)}" height="${b.height}" rx="2"><title>${b.title}</title></rect>
${b.unknown ? html`<rect class="tl-unknown" x="${n(b.unknown.x1)}" y="${n(b.y)}" width="${n(Math.max(1, b.unknown.x2 - b.unknown.x1))}" height="${b.height}" fill="url(#tl-hatch)"><title>${b.unknown.title}</title></rect>` : ""}
${b.label ? html`<text class="tl-bar-label" x="${n(b.x1 + 3)}" y="${n(b.y + b.height - 1.5)}">${b.label}</text>` : ""}
${b.attempts.map((a) => html`<line class="tl-attempt" x1="${n(a.x)}" y1="${n(b.y - 1)}" x2="${n(a.x)}" y2="${n(b.y + b.height + 1)}"><title>${a.title}</title></line>`)}
${b.reconcile ? html`<path class="tl-reconcile" d="M${n(b.reconcile.x)},${n(b.y - 2)} l-3,-4 h6 z"><title>${b.reconcile.title}</title></path>` : ""}
${b.settlements.map((s) => html`<path class="tl-settle" d="M${n(s.x)},${n(mid - 6)} l5,6 l-5,6 l-5,-6 z"><title>${s.title}</title></path>`)}
</g>`;
}

/** A straight arrow between lanes; a curve over the lane when it starts and ends in one lane. */
function arrowPath(x1: number, y1: number, x2: number, y2: number): string {
  if (y1 === y2) {
    const lift = 12;
    return `M${n(x1)},${n(y1)} C${n(x1)},${n(y1 - lift)} ${n(x2)},${n(y2 - lift)} ${n(x2)},${n(y2)}`;
  }
  return `M${n(x1)},${n(y1)} L${n(x2)},${n(y2)}`;
}

/** What each mark means, as HTML beside the drawing (the same classes draw the swatches). */
export function timelineLegend(): Html {
  const item = (swatch: Html, text: string) =>
    html`<li><svg class="tl-swatch" viewBox="0 0 24 14" width="24" height="14" aria-hidden="true">${swatch}</svg>${text}</li>`;
  return html`<ul class="tl-legend">
${item(html`<circle class="tl-event" cx="12" cy="7" r="4"/>`, "event")}
${item(html`<g class="tl-agg"><circle cx="12" cy="7" r="6.5"/><text x="12" y="10">3</text></g>`, "events close in time (count)")}
${item(html`<rect class="tl-bar Completed" x="1" y="3" width="22" height="8" rx="2"/>`, "effect, request to outcome (Completed, Pending, Unknown, Failed)")}
${item(html`<rect class="tl-unknown" x="1" y="3" width="22" height="8" fill="url(#tl-hatch)"/>`, "outcome Unknown")}
${item(html`<line class="tl-attempt" x1="12" y1="1" x2="12" y2="13"/>`, "attempt that went Unknown")}
${item(html`<path class="tl-reconcile" d="M12,9 l-4,-6 h8 z"/>`, "sent to reconciliation")}
${item(html`<path class="tl-settle" d="M12,1 l6,6 l-6,6 l-6,-6 z"/>`, "operator settlement")}
${item(html`<g class="tl-bundle"><rect x="4" y="2" width="16" height="10" rx="2"/><text x="12" y="10">9</text></g>`, "effects with no room to draw (count)")}
${item(html`<path class="tl-arrow message" d="M1,7 L21,7"/>`, "message")}
${item(html`<path class="tl-arrow event" d="M1,7 L21,7"/>`, "integration event")}
${item(html`<path class="tl-arrow message stub" d="M4,11 L14,3"/>`, "handled by no actor shown")}
${item(html`<rect class="tl-parked" x="1" y="4" width="22" height="6" fill="url(#tl-parked-hatch)"/>`, "parked behind a gap")}
${item(html`<path class="tl-dead" d="M8,3 l8,8 m0,-8 l-8,8"/>`, "dead letter")}
${item(html`<rect class="tl-break-swatch" x="8" y="0" width="8" height="14"/>`, "idle time cut out")}
</ul>`;
}
