import { InvalidInputError } from "./errors.js";

/**
 * A schema that validates synchronously, as Standard Schema describes it (zod 3.24+ and 4,
 * valibot, arktype implement it), so oncely needs no schema library's types.
 */
export interface SchemaLike<T> {
  readonly "~standard": {
    validate(value: unknown): SchemaResult<T> | Promise<SchemaResult<T>>;
    readonly types?: { readonly input: unknown; readonly output: T } | undefined;
  };
}
type PathSegment = PropertyKey | { readonly key: PropertyKey };
type SchemaResult<T> =
  | { readonly value: T; readonly issues?: undefined }
  | { readonly issues: readonly { readonly message: string; readonly path?: readonly PathSegment[] | undefined }[] };

/** How a declaration reads a value: a schema, or a function that returns it or throws. */
export type Parser<T> = SchemaLike<T> | ((raw: unknown) => T);

/**
 * Read `raw` with `parser` (as is when there is none). Throws `InvalidInputError` titled
 * `invalid <what>`, one detail per issue naming its path (`amount: Too small`).
 */
export function parseWith<T>(parser: Parser<T> | undefined, raw: unknown, what: string): T {
  if (parser === undefined) return raw as T;
  if (typeof parser === "function") {
    try {
      return parser(raw);
    } catch (error) {
      throw new InvalidInputError(`invalid ${what}`, [error instanceof Error ? error.message : String(error)]);
    }
  }
  const checked = parser["~standard"].validate(raw);
  if (checked instanceof Promise) throw new InvalidInputError(`the schema of the ${what} must validate synchronously`);
  if (!checked.issues) return checked.value;
  throw new InvalidInputError(
    `invalid ${what}`,
    checked.issues.map((issue) => `${pathText(issue.path)}: ${issue.message}`),
  );
}

const pathText = (path: readonly PathSegment[] | undefined): string =>
  path?.length ? path.map((s) => String(typeof s === "object" ? s.key : s)).join(".") : "(root)";
