import type { Dispatcher } from "./backend";
import { containerDispatcher } from "./container";
import { urlDispatcher } from "./transcoder-url";

/** The backend this deployment dispatches to: local Fastify servers when TRANSCODER_URL is set, else Containers. */
export function dispatcherFor(env: Env): Dispatcher {
  return env.TRANSCODER_URL.trim() ? urlDispatcher(env) : containerDispatcher(env);
}
