import { type HttpOptions, request, requestJson } from "./http.js";
import type { CreateDestination, Destination, DestinationTestResult, UpdateDestination } from "./types.js";

type Signal = { signal?: AbortSignal };

const path = (destination: string) => `/v1/destinations/${encodeURIComponent(destination)}`;

/** `ff.destinations`: S3-compatible buckets task outputs are delivered to; secrets go in, only a fingerprint comes out. */
export function destinationsResource(http: HttpOptions) {
  return {
    list: async (options: Signal = {}): Promise<Destination[]> => (await requestJson<{ destinations: Destination[] }>(http, "/v1/destinations", options)).destinations,
    /** One destination by id or name. */
    get: (destination: string, options: Signal = {}): Promise<Destination> => requestJson(http, path(destination), options),
    create: (destination: CreateDestination, options: Signal = {}): Promise<Destination> =>
      requestJson(http, "/v1/destinations", { json: destination, ...options }),
    /** Changes the fields given; new credentials (either half) replace the stored ones. */
    update: (destination: string, changes: UpdateDestination, options: Signal = {}): Promise<Destination> => requestJson(http, path(destination), { method: "PATCH", json: changes, ...options }),
    delete: async (destination: string, options: Signal = {}): Promise<void> => {
      await request(http, path(destination), { method: "DELETE", ...options });
    },
    /** Writes and deletes a probe object; rejects with DESTINATION_UNREACHABLE, DESTINATION_CREDENTIALS or DESTINATION_REFUSED. */
    test: (destination: string, options: Signal = {}): Promise<DestinationTestResult> => requestJson(http, `${path(destination)}/test`, { method: "POST", idempotent: true, ...options }),
  };
}
