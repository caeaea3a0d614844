import { register } from "node:module";

/**
 * `node --import tsx --import ./bench/built-package.mjs bench/…`: the bench measures oncely as its
 * users run it, the package's build in `dist/` (plain ES2022 from `tsc`, `npm run build`), not the
 * sources transpiled on the fly. tsx keeps function names by wrapping every function it creates
 * in a `__name` call, which the hot path would pay on each closure; the peers are measured as
 * their published JavaScript too. The bench's own files still run through tsx.
 */
register("./built-package-hooks.mjs", import.meta.url);
