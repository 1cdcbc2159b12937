import { PatternRouter } from "hono/router/pattern-router";
import { AppError } from "../shared/errors";
import { consoleApi } from "./console/api";
import { consolePages } from "./console";
import { discardUnreadBody } from "./files/unread-body";
import { requireValidConfig } from "./lib/config";
import { limitJsonBodies } from "./lib/json-body-limit";
import { createApp, mountAll } from "./lib/openapi";
import { onError, problemResponse } from "./lib/problem";
import { requireRouteHost } from "./lib/route-hosts";
import { oauthConsent } from "./mcp/consent";
import { oauthEndpoints } from "./mcp/oauth";
import { mcpServer } from "./mcp/server";
import { cdn } from "./routes/cdn";
import { destinations } from "./routes/destinations";
import { files } from "./routes/files";
import { internal } from "./routes/internal";
import { me } from "./routes/me";
import { presets } from "./routes/presets";
import { taskActions } from "./routes/task-actions";
import { taskBatch } from "./routes/task-batch";
import { taskDeliveries } from "./routes/task-deliveries";
import { tasks } from "./routes/tasks";
import { tus } from "./routes/tus";
import { signedUploads, uploads } from "./routes/uploads";
import { webhookEndpoints } from "./routes/webhook-endpoints";
import { webhooks } from "./routes/webhooks";

/** The whole HTTP surface of the Worker, built from one sub-app per resource. */
export function buildApp() {
  const app = createApp();
  app.use("*", discardUnreadBody, limitJsonBodies, requireValidConfig, requireRouteHost);
  mountAll(app, [me, tasks, taskBatch, taskDeliveries, taskActions, webhooks, webhookEndpoints, uploads, signedUploads, tus, presets, files, destinations, cdn, internal]);
  // Before the console pages: /console/api/* is JSON, never a page.
  app.route("/", consoleApi((request, env, ctx) => app.fetch(request, env, ctx)));
  app.route("/console", consolePages);
  app.route("/", mcpServer((request, env, ctx) => app.fetch(request, env, ctx)));
  app.route("/", oauthEndpoints());
  app.route("/", oauthConsent());

  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", { type: "http", scheme: "bearer", description: "An API key: ffe_..." });
  app.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: { title: "ffedge", version: "1.0.0", description: "ffmpeg as a cloud service: tasks, live progress and temporary file storage." },
  });

  const methodsByPath = new PatternRouter<string>();
  for (const route of app.routes) if (route.method !== "ALL") methodsByPath.add("ALL", route.path, route.method);

  app.notFound((c) => {
    const allowed = [...new Set(methodsByPath.match("ALL", c.req.path)[0].map(([method]) => method))];
    if (allowed.length > 0) {
      const error = new AppError("METHOD_NOT_ALLOWED", `${c.req.method} is not allowed on ${c.req.path}; use ${allowed.join(", ")}.`);
      return problemResponse(error, { allow: allowed.join(", ") });
    }
    return problemResponse(new AppError("NOT_FOUND", `There is no route ${c.req.method} ${c.req.path}.`));
  });
  app.onError(onError);
  return app;
}
