/**
 * How a transcoder in a Cloudflare Container reaches the network: the container has no
 * internet of its own, and every HTTP(S) request it makes is handed to the Worker's outbound
 * handlers (edge/dispatch/transcoder-container.ts).
 * https://developers.cloudflare.com/containers/platform-details/outbound-traffic/
 */

/**
 * The virtual host the transcoder calls for its reports, output uploads and log. It is answered
 * inside the Worker and never resolved or fetched: `.internal` is reserved for private use, so
 * no public name can collide with it.
 */
export const CONTAINER_EDGE_HOST = "edge.ffedge.internal";

/**
 * Set on the outbound handler's own refusal of a request (never on an origin's answer, which
 * the handler strips of it): its value is the error code, the problem+json body says why.
 */
export const EGRESS_REFUSED_HEADER = "x-ffedge-egress-refused";
