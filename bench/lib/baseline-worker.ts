/**
 * The bench's yardstick, never deployed: the cheapest possible upload, the request body piped
 * straight into R2.put (the request's Content-Length gives R2 the known length it needs).
 */
// The one R2 method used, typed here because this tsconfig has Node's types, not workerd's.
interface Env {
  FILES: { put(key: string, value: ReadableStream<Uint8Array>): Promise<{ size: number } | null> };
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    if (request.method !== "PUT" || !request.body) return new Response("PUT a body", { status: 405 });
    const key = new URL(request.url).pathname.slice(1);
    const object = await env.FILES.put(key, request.body);
    return Response.json({ key, size: object?.size ?? 0 }, { status: 201 });
  },
};
