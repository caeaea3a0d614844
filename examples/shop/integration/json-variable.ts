import { z } from "zod";

/**
 * An environment variable holding JSON: parsed, then validated by `schema`, every issue reported
 * with its path inside the value (the config names the variable; the value itself is never echoed).
 */
export function jsonVariable<T>(schema: z.ZodType<T>, expected: string) {
  return z.string().transform((text, ctx): T => {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      ctx.addIssue({ code: "custom", message: `must be ${expected}` });
      return z.NEVER;
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        ctx.addIssue({ code: "custom", message: `${issue.path.join(".") || "(root)"}: ${issue.message}` });
      return z.NEVER;
    }
    return parsed.data;
  });
}
