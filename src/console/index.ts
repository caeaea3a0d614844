/** The operator console (`oncely/console`): a fastify plugin over any journal. Bring fastify yourself. */
export {
  listActions,
  type NewOperatorAction,
  OPERATOR_ACTIONS,
  type OperatorAction,
  recordAction,
  type SettlementState,
} from "./audit.js";
export {
  assertBearerToken,
  BEARER_TOKEN_PATTERN,
  BEARER_TOKEN_RULE,
  type BearerCheck,
  bearerVerifier,
} from "./bearer.js";
export { escapeHtml, Html, html } from "./html.js";
export type { ConsoleJournal, ConsoleOptions, ConsoleReader } from "./options.js";
export { consolePlugin } from "./plugin.js";
