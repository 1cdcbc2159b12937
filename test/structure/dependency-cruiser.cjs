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
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports count: they tie the layers together as much as runtime ones.
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] },
  },
};
