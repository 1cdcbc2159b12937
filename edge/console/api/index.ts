import { createApp, mountAll } from "../../lib/openapi";
import { account } from "./account";
import { auth } from "./auth";
import { type Forward, publicApiForSession } from "./forward";
import { requireSameOrigin } from "./guards";
import { keys } from "./keys";
import { outbox } from "./outbox";
import { taskSummaries } from "./task-summaries";
import { usage } from "./usage";

/**
 * The console's JSON API, `/console/api/*` (docs/console-api.md). `forward` re-enters the
 * Worker's app for the public API mounted under the session.
 */
export function consoleApi(forward: Forward) {
  const app = createApp();
  app.use("/console/api/*", requireSameOrigin);
  mountAll(app, [auth, account, keys, usage, outbox, taskSummaries, publicApiForSession(forward)]);
  return app;
}
