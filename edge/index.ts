import { buildApp } from "./app";
import { sweepExpiredFiles } from "./files/sweep";

export { TaskObject } from "./tasks/task-object";

const app = buildApp();

export default {
  fetch: app.fetch,
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(sweepExpiredFiles(env).then((count) => console.log(JSON.stringify({ msg: "sweep", deleted: count }))));
  },
} satisfies ExportedHandler<Env>;
