import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { JobEventSchema, type JobEvent } from "../../../shared/schemas/jobs";

export type Handler = (request: http.IncomingMessage, response: http.ServerResponse) => void;

async function listen(handler: Handler): Promise<{ server: http.Server; base: string }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function close(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

export interface MediaServer {
  url(path: string): string;
  /** Paths requested so far, in order. */
  hits: string[];
  close(): Promise<void>;
}

/** Serves test media on 127.0.0.1 (reachable through DEV_FETCH_ALLOW_HOSTS only). */
export async function startMediaServer(routes: Record<string, Handler>): Promise<MediaServer> {
  const hits: string[] = [];
  const { server, base } = await listen((request, response) => {
    const path = (request.url ?? "/").split("?")[0]!;
    hits.push(path);
    const handler = routes[path];
    if (handler) return handler(request, response);
    response.writeHead(404).end();
  });
  return { url: (path) => `${base}${path}`, hits, close: () => close(server) };
}

export const serveFile = (file: string, contentType = "application/octet-stream"): Handler => (_request, response) => {
  response.writeHead(200, { "content-type": contentType });
  createReadStream(file).pipe(response);
};

export const serveText = (text: string, contentType = "video/mp4"): Handler => (_request, response) => {
  response.writeHead(200, { "content-type": contentType, "content-length": Buffer.byteLength(text) }).end(text);
};

export const redirectTo = (location: string, status = 302): Handler => (_request, response) => {
  response.writeHead(status, { location }).end();
};

export interface EdgeStub {
  callbackUrl(taskId: string): string;
  tokenFor(taskId: string): string;
  events(taskId: string): JobEvent[];
  /** Uploaded bodies by "<task>/<filename>". */
  uploads: Map<string, Buffer>;
  /** The output PUTs the transcoder sent, per task (refused ones too). */
  uploadRequests(taskId: string): { filename: string; size: number; content_type: string }[];
  /** Answer `cancel: true` to the next report of a task. */
  cancelOnNextReport(taskId: string): void;
  /** Fail the next `count` event posts with a 503. */
  failNextEvents(count: number): void;
  /** Answer every upload with this status instead of storing it. */
  uploadStatus?: number;
  waitForTerminal(taskId: string, timeoutMs?: number): Promise<Extract<JobEvent, { type: "completed" | "failed" }>>;
  /** Resolves when a task has sent an event matching `predicate`. */
  waitForEvent(taskId: string, predicate: (event: JobEvent) => boolean, timeoutMs?: number): Promise<JobEvent>;
  close(): Promise<void>;
}

/**
 * Plays the edge's side of the callbacks: validates and records reports with the shared
 * schemas, and stores the outputs PUT to `{callback_url}/outputs/<name>`, answering each with a receipt.
 */
export async function startEdgeStub(): Promise<EdgeStub> {
  const events = new Map<string, JobEvent[]>();
  const requests = new Map<string, { filename: string; size: number; content_type: string }[]>();
  const uploads = new Map<string, Buffer>();
  const cancelling = new Set<string>();
  let failures = 0;
  let base = "";

  const stub: EdgeStub = {
    callbackUrl: (taskId) => `${base}/internal/tasks/${taskId}`,
    tokenFor: (taskId) => `callback-token-${taskId}`,
    events: (taskId) => events.get(taskId) ?? [],
    uploads,
    uploadRequests: (taskId) => requests.get(taskId) ?? [],
    cancelOnNextReport: (taskId) => void cancelling.add(taskId),
    failNextEvents: (count) => void (failures = count),
    waitForTerminal: async (taskId, timeoutMs) =>
      (await stub.waitForEvent(taskId, (event) => event.type === "completed" || event.type === "failed", timeoutMs)) as Extract<JobEvent, { type: "completed" | "failed" }>,
    waitForEvent: async (taskId, predicate, timeoutMs = 30_000) => {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = stub.events(taskId).find(predicate);
        if (found) return found;
        if (Date.now() > until) throw new Error(`no matching event for ${taskId} within ${timeoutMs} ms; got ${JSON.stringify(stub.events(taskId))}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: async () => close(server),
  };

  const { server, base: listening } = await listen(async (request, response) => {
    const body = await readBody(request);
    const url = request.url ?? "/";
    const callback = /^\/internal\/tasks\/([^/]+)\/events$/.exec(url);
    if (callback && request.method === "POST") {
      const taskId = callback[1]!;
      if (request.headers.authorization !== `Bearer ${stub.tokenFor(taskId)}`) return json(response, 401, { code: "UNAUTHORIZED" });
      if (failures > 0) {
        failures--;
        return json(response, 503, { code: "INTERNAL" });
      }
      const event = JobEventSchema.parse(JSON.parse(body.toString("utf8")));
      events.set(taskId, [...stub.events(taskId), event]);
      const cancel = cancelling.delete(taskId);
      return json(response, 200, { ok: true, cancel });
    }
    const output = /^\/internal\/tasks\/([^/]+)\/outputs\/([^/?]+)$/.exec(url);
    if (output && request.method === "PUT") {
      const taskId = output[1]!;
      if (request.headers.authorization !== `Bearer ${stub.tokenFor(taskId)}`) return json(response, 401, { code: "UNAUTHORIZED" });
      const name = decodeURIComponent(output[2]!);
      const size = Number(request.headers["content-length"]);
      requests.set(taskId, [...stub.uploadRequests(taskId), { filename: name, size, content_type: request.headers["content-type"] ?? "" }]);
      if (stub.uploadStatus) return json(response, stub.uploadStatus, { code: "REFUSED" });
      if (size !== body.length) return json(response, 400, { code: "SIZE_MISMATCH" });
      uploads.set(`${taskId}/${name}`, body);
      return json(response, 201, { key: `${taskId}/${name}`, size: body.length, md5: createHash("md5").update(body).digest("hex"), receipt: `receipt:${taskId}/${name}:${body.length}` });
    }
    json(response, 404, { code: "NOT_FOUND" });
  });
  base = listening;
  return stub;
}

function readBody(request: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

function json(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}
