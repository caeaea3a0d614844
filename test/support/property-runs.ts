/**
 * How many cases a property test runs. The default run (`npm test`, CI) takes `normal`;
 * `ONCELY_DEEP=1` takes `deep`, the deeper run for a change to what the property covers (the
 * counts the suite ran by default until 2026-12-05). Any other value of ONCELY_DEEP is refused, so
 * a typo never silently runs the shallow suite.
 */
export function propertyRuns(normal: number, deep: number, env: NodeJS.ProcessEnv = process.env): number {
  const flag = env.ONCELY_DEEP;
  if (flag === undefined || flag === "" || flag === "0") return normal;
  if (flag === "1") return deep;
  throw new Error(`ONCELY_DEEP must be 1 (deep property runs) or 0/unset (default runs), not ${JSON.stringify(flag)}`);
}
