import { buildApp } from "./app";
import { sweepExpiredFiles } from "./files/sweep";
import { routeQueue } from "./queue/router";

export { ContainerProxy } from "@cloudflare/containers";
export { AccountObject } from "./accounts/account-object";
export { TranscoderContainer } from "./dispatch/transcoder-container";
export { TaskObject } from "./tasks/task-object";

const app = buildApp();

export default {
  fetch: app.fetch,
  queue: routeQueue,
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(sweepExpiredFiles(env).then((count) => console.log(JSON.stringify({ msg: "sweep", deleted: count }))));
  },
} satisfies ExportedHandler<Env>;
