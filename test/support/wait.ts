/** Poll `check` (real time) until it holds; fail naming `what` after `timeoutMs`. */
export const waitFor = async (check: () => Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> => {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};
