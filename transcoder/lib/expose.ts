import type { FastifyPluginAsync } from "fastify";

/**
 * Lets a plugin's decorators and hooks reach its parent instead of staying encapsulated: what
 * the `fastify-plugin` package does, without the dependency.
 * https://fastify.dev/docs/latest/Reference/Encapsulation/
 */
export function exposed<Options extends Record<string, unknown>>(plugin: FastifyPluginAsync<Options>): FastifyPluginAsync<Options> {
  return Object.assign(plugin, { [Symbol.for("skip-override")]: true });
}
