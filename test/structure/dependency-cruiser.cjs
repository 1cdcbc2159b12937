/** The import rules of the tree, checked by test/structure/imports.test.ts. */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "Layers point one way: a cycle, even through a type-only import, means two modules share one idea.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "shared-is-framework-free",
      comment: "shared/ is imported by the Worker, the transcoder and the scripts alike; web frameworks belong to edge/ (Hono) and transcoder/ (Fastify).",
      severity: "error",
      from: { path: "^shared/" },
      to: { path: "(^|node_modules/)(hono|@hono/[^/]+|fastify|@fastify/[^/]+|fastify-[^/]+)(/|$)" },
    },
    {
      name: "transcoder-never-loads-hono",
      comment: "The transcoder is a Fastify service: nothing it imports, directly or through shared/, may load the edge's framework.",
      severity: "error",
      from: { path: "^transcoder/" },
      to: { path: "(^|node_modules/)(hono|@hono/[^/]+)(/|$)", reachable: true },
    },
    {
      name: "edge-never-loads-fastify",
      comment: "The Worker is a Hono app: nothing it imports may load the transcoder's framework.",
      severity: "error",
      from: { path: "^edge/" },
      to: { path: "(^|node_modules/)(fastify|@fastify/[^/]+)(/|$)", reachable: true },
    },
    {
      name: "lib-imports-no-domain",
      comment:
        "edge/lib/ is the ground floor of the Worker (config, auth, problem details, platform helpers): routes and the domain build on it, never the reverse.",
      severity: "error",
      from: { path: "^edge/lib/" },
      to: { path: "^edge/(accounts|tasks|files|dispatch|webhooks|routes|console)/" },
    },
    {
      name: "domain-imports-no-routes",
      comment: "Routes (edge/routes/, the console) call the domain (tasks, files, accounts, dispatch, webhooks); the domain never reaches back up into a route module.",
      severity: "error",
      from: { path: "^edge/(accounts|tasks|files|dispatch|webhooks)/" },
      to: { path: "^edge/(routes|console)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports count: they tie the layers together as much as runtime ones.
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] },
  },
};
