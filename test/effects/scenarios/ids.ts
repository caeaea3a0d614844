let n = 0;
/** Order ids unique within a test file (PostgreSQL tests of one file share a schema). */
export const nextOrderId = (): string => `${process.pid.toString(36)}${Date.now().toString(36)}-${++n}`;
