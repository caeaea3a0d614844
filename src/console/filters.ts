import { z } from "zod";
import { type Html, html, query } from "./html.js";
import type { ConsoleContext } from "./options.js";

/**
 * Filter fields shared by the console's lists: a time as the browser's `datetime-local` input
 * sends it (read as UTC, as every time on the pages is shown) or any ISO 8601 time, and the
 * cursor of the page to show.
 */
export const timeParam = z
  .string()
  .trim()
  .max(40)
  .optional()
  .transform((text, ctx) => {
    if (text === undefined || text === "") return undefined;
    const zoned = /(Z|[+-]\d\d:?\d\d)$/.test(text) ? text : `${text}Z`;
    const ms = Date.parse(zoned);
    if (!Number.isFinite(ms)) {
      ctx.addIssue({ code: "custom", message: "must be a time such as 2026-05-01T12:00 (UTC)" });
      return z.NEVER;
    }
    return ms;
  });

export const cursorParam = z.string().max(400).optional();

/** An optional text filter: empty means none. */
export const textParam = (max: number) =>
  z
    .string()
    .max(max)
    .optional()
    .transform((text) => (text === undefined || text.trim() === "" ? undefined : text.trim()));

/** A `datetime-local` input's value for a time (UTC, to the millisecond), or empty. */
export const localTime = (ms: number | undefined): string =>
  ms === undefined ? "" : new Date(ms).toISOString().slice(0, 23);

/** The since/until inputs of a filter form. */
export function timeRangeInputs(since: number | undefined, until: number | undefined): Html {
  return html`<label>Since (UTC) <input type="datetime-local" name="since" value="${localTime(since)}"></label>
  <label>Until (UTC) <input type="datetime-local" name="until" value="${localTime(until)}"></label>`;
}

/** Links to the first page and the next one, keeping the filters. */
export function pager(
  ctx: ConsoleContext,
  path: string,
  params: Record<string, string | number | undefined>,
  next: string | null,
  paged: boolean,
): Html {
  const first = paged ? html`<a data-nav href="${ctx.prefix}/${path}${query(params)}">first page</a>` : "";
  const more = next
    ? html`<a data-nav class="next" href="${ctx.prefix}/${path}${query({ ...params, after: next })}">next page</a>`
    : "";
  return first || more ? html`<p class="pager">${first} ${more}</p>` : html``;
}

/** The filter values as query parameters for links (times back as inputs show them). */
export function filterParams(
  filter: Record<string, string | number | undefined>,
): Record<string, string | number | undefined> {
  const out: Record<string, string | number | undefined> = {};
  for (const [k, v] of Object.entries(filter))
    out[k] = (k === "since" || k === "until") && typeof v === "number" ? localTime(v) : v;
  return out;
}
