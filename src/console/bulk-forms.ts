import { z } from "zod";
import type { DeadLetterMatch } from "../journal/console-queries.js";
import { type BulkFilter, bulkAct, countOpen, describeBulk } from "./bulk.js";
import { localTime, textParam, timeParam } from "./filters.js";
import { type Html, html } from "./html.js";
import type { ConsoleContext } from "./options.js";
import { parseBody } from "./validation.js";

const filterFields = {
  consumer: textParam(200),
  error: textParam(500),
  since: timeParam,
  until: timeParam,
};

/** A bulk dry run as posted: the filter only. */
export const bulkCountForm = z.strictObject(filterFields);

/** A bulk action as posted: the filter, the count its dry run showed, who, and why. */
export const bulkForm = z.strictObject({
  ...filterFields,
  action: z.enum(["replay", "discard"], { message: "must be replay or discard" }),
  expected: z.coerce
    .number({ message: "the dry run's count is required" })
    .int("must be the dry run's count")
    .min(0, "must be the dry run's count"),
  by: z.string().trim().min(1, "the operator's name is required").max(200),
  note: z.string().max(2_000).optional(),
});

const bulkFilter = (form: z.infer<typeof bulkCountForm>): BulkFilter => ({
  consumer: form.consumer,
  errorContains: form.error,
  since: form.since,
  until: form.until,
});

/** `POST /api/dead-letters/bulk/count`: how many open dead letters the filter matches. */
export async function bulkCount(ctx: ConsoleContext, body: unknown): Promise<{ message: string; matched: number }> {
  const form = parseBody(bulkCountForm, body, "bulk dry run");
  const matched = await countOpen(ctx.journal, bulkFilter(form));
  return { message: `${matched} open dead letter(s) match`, matched };
}

/** `POST /api/dead-letters/bulk`: replay or discard every open dead letter the filter matches. */
export async function bulkAction(ctx: ConsoleContext, body: unknown) {
  const form = parseBody(bulkForm, body, "bulk action");
  const { consumer, error, since, until } = form;
  const result = await bulkAct(
    { ...ctx, via: "console", by: form.by, note: form.note?.trim() || null },
    form.action,
    bulkFilter({ consumer, error, since, until }),
    form.expected,
  );
  return { message: describeBulk(result), ...result };
}

/** The dead-letters page's bulk forms, for the open letters its filter shows (`total` of them). */
export function bulkForms(ctx: ConsoleContext, match: DeadLetterMatch & { total?: number }): Html {
  const total = match.total ?? 0;
  const hidden = html`<input type="hidden" name="consumer" value="${match.consumer ?? ""}">
    <input type="hidden" name="error" value="${match.errorContains ?? ""}">
    <input type="hidden" name="since" value="${localTime(match.since)}">
    <input type="hidden" name="until" value="${localTime(match.until)}">
    <input type="hidden" name="expected" value="${total}">`;
  const form = (action: "replay" | "discard", label: string, danger: boolean) =>
    html`<form class="bulk-${action}" data-post="${ctx.prefix}/api/dead-letters/bulk" data-confirm="${`${label}: all ${total} open dead letter(s) matching this filter?`}">
    <input type="hidden" name="action" value="${action}">${hidden}
    <label>Operator <input name="by" data-operator required></label>
    <label>Note <input name="note"></label>
    <button${danger ? html` class="danger"` : ""}>${label} all ${total}</button>
  </form>`;
  return html`<details class="bulk"><summary>Act on all ${total} matching open dead letter(s)</summary>
<p class="summary">The count above is the dry run: the action is refused if the matching set changed since this page was drawn. One operator action is recorded per letter.</p>
<div class="actions">${form("replay", "Replay", false)}${form("discard", "Discard", true)}</div></details>`;
}
