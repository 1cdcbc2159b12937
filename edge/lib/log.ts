/** What a line says besides its `msg`; a field named `error` holds whatever was thrown. */
type LogFields = Record<string, unknown>;

/**
 * The edge's log: one JSON line per event, so Workers Logs indexes each field on its own
 * (https://developers.cloudflare.com/workers/observability/logs/workers-logs/). The level is the
 * console method's, which Workers Logs and `wrangler tail` record with every line.
 *
 * @example
 * log.error("mail not sent", { purpose: "verify", code: "E_RATE_LIMIT_EXCEEDED", error });
 * // console.error: {"msg":"mail not sent","purpose":"verify","code":"E_RATE_LIMIT_EXCEEDED","error":"Error: …"}
 */
export const log = {
  info(msg: string, fields?: LogFields): void {
    console.log(line(msg, fields));
  },
  warn(msg: string, fields?: LogFields): void {
    console.warn(line(msg, fields));
  },
  error(msg: string, fields?: LogFields): void {
    console.error(line(msg, fields));
  },
};

/** `error` is written as its name and message ("TypeError: …"), whatever was thrown. */
function line(msg: string, fields: LogFields = {}): string {
  try {
    return JSON.stringify("error" in fields ? { msg, ...fields, error: String(fields.error) } : { msg, ...fields });
  } catch (failure) {
    // Called from error handlers: a field JSON cannot hold (a cycle, a BigInt) must cost the
    // fields, never turn the handled error into a new one.
    return JSON.stringify({ msg, unlogged_fields: Object.keys(fields), log_error: String(failure) });
  }
}
