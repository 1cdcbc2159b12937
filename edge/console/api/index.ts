import { requireSameOrigin } from "./guards";
import { createApp } from "../../lib/openapi";
import { account } from "./account";
import { auth } from "./auth";
import { type Forward, publicApiForSession } from "./forward";
import { keys } from "./keys";
import { outbox } from "./outbox";
import { usage } from "./usage";

/**
 * The console's JSON API, `/console/api/*` (docs/console-api.md). `forward` re-enters the
 * Worker's app for the public API mounted under the session.
 */
export function consoleApi(forward: Forward) {
  const app = createApp();
  app.use("/console/api/*", requireSameOrigin);
  app.route("/", auth);
  app.route("/", account);
  app.route("/", keys);
  app.route("/", usage);
  app.route("/", outbox);
  app.route("/", publicApiForSession(forward));
  return app;
}
