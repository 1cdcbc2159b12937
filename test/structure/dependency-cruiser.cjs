/** The import rules of the tree, checked by test/structure/imports.test.ts. */
const HONO = "(^|node_modules/)(hono|@hono/[^/]+)(/|$)";
const FASTIFY = "(^|node_modules/)(fastify|@fastify/[^/]+|fastify-[^/]+)(/|$)";

/** Modules under `from` may not import modules matching `to`; with `reachable`, not even through other modules. */
const forbid = (name, comment, from, to, { reachable = false } = {}) => ({ name, comment, severity: "error", from: { path: from }, to: { path: to, ...(reachable && { reachable }) } });

module.exports = {
  forbidden: [
    { name: "no-circular", comment: "Layers point one way: a cycle, even through a type-only import, means two modules share one idea.", severity: "error", from: {}, to: { circular: true } },
    forbid("shared-is-framework-free", "shared/ is imported by the Worker, the transcoder and the scripts alike; web frameworks belong to edge/ (Hono) and transcoder/ (Fastify).", "^shared/", [HONO, FASTIFY]),
    forbid("transcoder-never-loads-hono", "The transcoder is a Fastify service: nothing it imports, directly or through shared/, may load the edge's framework.", "^transcoder/", HONO, { reachable: true }),
    forbid("edge-never-loads-fastify", "The Worker is a Hono app: nothing it imports may load the transcoder's framework.", "^edge/", FASTIFY, { reachable: true }),
    forbid("lib-imports-no-domain", "edge/lib/ is the ground floor of the Worker (config, auth, problem details, platform helpers): routes and the domain build on it, never the reverse.", "^edge/lib/", "^edge/(accounts|tasks|files|dispatch|webhooks|routes|console|mcp)/"),
    forbid("domains-never-import-the-core", "edge/tasks/ is the core domain and the others point at it, never back: files/, dispatch/, webhooks/ and accounts/ take what they need as data or through a port of their own (dispatch asks a task's object whether the task is over through its stub; tasks/ builds the webhook event and hands it over).", "^edge/(files|dispatch|webhooks|accounts)/", "^edge/tasks/"),
    forbid("webhooks-import-no-other-domain", "Webhook delivery signs, sends, retries and logs an event it is handed; what the event says is the caller's business.", "^edge/webhooks/", "^edge/(accounts|dispatch|files)/"),
    forbid("files-import-no-other-domain", "File storage serves uploads and outputs for every other domain and depends on none of them.", "^edge/files/", "^edge/(accounts|dispatch|webhooks)/"),
    forbid("domain-imports-no-routes", "Routes (edge/routes/, the console, the MCP server) call the domain (tasks, files, accounts, dispatch, webhooks); the domain never reaches back up into a route module.", "^edge/(accounts|tasks|files|dispatch|webhooks)/", "^edge/(routes|console|mcp)/"),
    { name: "sdk-stands-alone", comment: "@ffedge/sdk is published on its own and runs in browsers, Workers, Deno and Bun: it imports nothing outside its own source (its types are generated from the OpenAPI document into clients/sdk/src/openapi.ts).", severity: "error", from: { path: "^clients/sdk/src/" }, to: { pathNot: "^clients/sdk/src/" } },
    forbid("cli-builds-on-the-sdk", "The CLI talks to the service only through @ffedge/sdk, as any user's program would.", "^clients/cli/src/", "^(edge|shared|transcoder|scripts)/"),
    forbid("product-never-imports-clients", "The clients depend on the service's API, never the reverse.", "^(edge|shared|transcoder)/", "^clients/"),
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)dist/" },
    // Type-only imports count: they tie the layers together as much as runtime ones.
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] },
  },
};
