import { InvalidInputError } from "../base/errors.js";

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/;

/**
 * A duration flag such as `7d`, `36h`, `90m`, `30s`, `500ms` or `2w`, in ms. A bare number is
 * refused: a retention window in the wrong unit deletes what must stay.
 */
export function parseDuration(flag: string, value: string): number {
  const match = DURATION.exec(value.trim());
  const ms = match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : Number.NaN;
  if (!match || !(ms > 0) || !Number.isFinite(ms)) {
    throw new InvalidInputError(
      `${flag} "${value}" must be a positive duration with a unit: ms, s, m, h, d or w (e.g. 7d, 36h)`,
    );
  }
  return ms;
}
