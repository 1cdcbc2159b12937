/**
 * `npm run bench -- ops`
 *
 * Counts, for one typical task — one upload, one task with one output, one webhook that tells
 * the client it ended (no polling, no event stream) — every billable platform operation the Worker performs,
 * and prices 1,000 such tasks at Cloudflare's published rates. Then the cost of one poll
 * (GET /v1/tasks/{id}) on its own, since clients that poll add that per request.
 *
 * The real Worker runs on the real local stack, wrapped by a bench-only entry module
 * (written here, never deployed) whose env counts D1 rows, Durable Object requests, queue
 * messages and R2 operations, and whose Durable Objects count their storage's rows
 * (bench/worker/meter.ts).
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { makeClip } from "../scripts/lib/media";
import { Stack, authed, uploadLocalFile } from "../scripts/lib/local-stack";

/** USD, from https://developers.cloudflare.com/workers/platform/pricing/ and each product's pricing page (read 2026-11). */
const PRICES = {
  workerRequest: 0.3 / 1e6,
  d1RowRead: 0.001 / 1e6,
  d1RowWritten: 1.0 / 1e6,
  /** SQLite-backed Durable Object storage, billed since January 2026 at D1's row prices. */
  doRowRead: 0.001 / 1e6,
  doRowWritten: 1.0 / 1e6,
  doRequest: 0.15 / 1e6,
  /** Durable Object duration: $12.50 per million GB-s, at the 128 MB every object is billed for. */
  doGbSecond: 12.5 / 1e6,
  queueOperation: 0.4 / 1e6,
  r2ClassA: 4.5 / 1e6,
  r2ClassB: 0.36 / 1e6,
  /** Container standard-2 (1 vCPU, 6 GiB, 12 GB disk), per second running. */
  containerSecond: 1 * 0.00002 + 6 * 0.0000025 + 12 * 0.00000007,
};
const TARGET_OPERATIONS = 15;

type Counts = Record<string, number>;
/** The meter's snapshot: the counts, and every counted operation in order. */
type Snapshot = { counts: Counts; trace: string[] };

export async function runOpsBenchmark(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "ffedge-bench-ops-"));
  const entry = await writeEntryModule(dir);
  const receiver = await webhookReceiver();
  const stack = await Stack.start({ main: entry });
  try {
    const { key } = await stack.createUser();
    const clip = await makeClip(dir, "clip.mp4", { seconds: 2, size: "640x360" });
    // Warm-up: one whole task first. A fresh isolate does one-off work, and a user's first
    // webhook creates their signing secret; the counted task is that of a returning user.
    await runTypicalTask(stack, key, clip, receiver);
    await stack.fetch("/__bench/ops", { method: "DELETE" });

    const started = Date.now();
    const taskId = await submitTypicalTask(stack, key, clip, receiver.url);
    // The client learns of the end from its webhook, as a client that does not poll would.
    await receiver.delivered(taskId, 120_000);
    const taskSeconds = (Date.now() - started) / 1000;
    // Let the last acknowledgements and end-of-task effects settle before reading the counts.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const { counts: typical, trace } = await counts(stack);

    // One poll, counted on its own; it also confirms the task really completed.
    await stack.fetch("/__bench/ops", { method: "DELETE" });
    const polled = (await (await stack.fetch(`/v1/tasks/${taskId}`, authed(key))).json()) as { status: string; error?: string };
    const { counts: poll } = await counts(stack);
    if (polled.status !== "completed") throw new Error(`task ${taskId} did not complete: ${JSON.stringify(polled)}`);
    const final = polled.status;

    const report = [
      `One typical task (${final}; ${taskSeconds.toFixed(1)} s from upload to webhook), counted on the local stack:`,
      "",
      ...table(typical, taskSeconds),
      "",
      "Each operation of that task, in order:",
      "",
      "```",
      ...trace,
      "```",
      "",
      "One poll (GET /v1/tasks/{id}) on its own:",
      "",
      ...table(poll, 0),
    ].join("\n");
    process.stdout.write(`${report}\n`);
    await mkdir("bench/results", { recursive: true });
    await writeFile("bench/results/ops.json", JSON.stringify({ date: new Date().toISOString(), typical, poll, taskSeconds, trace }, null, 2));
    await writeFile("bench/results/ops.md", `${report}\n`);
  } finally {
    await stack.stop();
    await receiver.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** One upload and one task with one output and a webhook; returns the task's id once it is accepted. */
async function submitTypicalTask(stack: Stack, key: string, clip: string, webhook: string): Promise<string> {
  const upload = await uploadLocalFile(stack, key, clip);
  const response = await stack.fetch("/v1/tasks", authed(key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ command: `ffmpeg -i ${upload.url} -c:v libx264 -preset veryfast -crf 28 -c:a aac out.mp4`, webhook }) }));
  if (response.status !== 201) throw new Error(`task refused: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { task_id: string }).task_id;
}

async function runTypicalTask(stack: Stack, key: string, clip: string, receiver: Receiver): Promise<void> {
  await receiver.delivered(await submitTypicalTask(stack, key, clip, receiver.url), 120_000);
}

/** The bench-only entry: the real Worker and Durable Objects, with metered bindings. */
async function writeEntryModule(dir: string): Promise<string> {
  const root = process.cwd();
  const index = await readFile(join(root, "edge/index.ts"), "utf8");
  const exported = [...index.matchAll(/^export \{ (\w+) \} from/gm)].map((match) => match[1]!);
  const objects = [...(await readFile(join(root, "wrangler.toml"), "utf8")).matchAll(/\[\[durable_objects\.bindings\]\]\s*name = "(\w+)"\s*class_name = "(\w+)"/g)].map((match) => ({ binding: match[1]!, className: match[2]! }));
  // Containers are not run locally (TRANSCODER_URL): their class is passed through as it is.
  const metered = objects.filter((object) => exported.includes(object.className) && object.className !== "TranscoderContainer");
  const lines = [
    `import worker, * as edge from ${JSON.stringify(resolve(root, "edge/index.ts"))};`,
    `import { meterClass, meterHandler } from ${JSON.stringify(resolve(root, "bench/worker/meter.ts"))};`,
    `export default meterHandler(worker);`,
    ...exported.filter((name) => !metered.some((object) => object.className === name)).map((name) => `export const ${name} = edge.${name};`),
    ...metered.map((object) => `export const ${object.className} = meterClass(${JSON.stringify(object.binding)}, edge.${object.className});`),
  ];
  const path = join(dir, "metered-worker.ts");
  await writeFile(path, `${lines.join("\n")}\n`);
  return path;
}

async function counts(stack: Stack): Promise<Snapshot> {
  const { trace = [], ...counts } = (await (await stack.fetch("/__bench/ops")).json()) as Counts & { trace?: string[] };
  return { counts, trace };
}

function sum(counts: Counts, pattern: RegExp): number {
  return Object.entries(counts).filter(([name]) => pattern.test(name)).reduce((total, [, value]) => total + value, 0);
}

function table(c: Counts, containerSeconds: number): string[] {
  const written = sum(c, /^queue\..+\.written$/);
  const delivered = sum(c, /^queue\..+\.delivered$/);
  const rows: [string, number, number, string][] = [
    ["Worker requests (HTTP + queue batches)", c["worker.requests"] ?? 0, PRICES.workerRequest, ""],
    ["D1 rows read", c["d1.rows_read"] ?? 0, PRICES.d1RowRead, `${c["d1.queries"] ?? 0} queries`],
    ["D1 rows written", c["d1.rows_written"] ?? 0, PRICES.d1RowWritten, ""],
    ["Durable Object requests", sum(c, /^do\..+\.requests$/), PRICES.doRequest, Object.entries(c).filter(([name]) => /^do\..+\.requests$/.test(name)).map(([name, value]) => `${name.split(".")[1]} ${value}`).join(", ")],
    ["Queue operations (write + read + delete)", written + delivered + written, PRICES.queueOperation, `${written} messages, ${delivered} deliveries`],
    ["R2 class A", c["r2.class_a"] ?? 0, PRICES.r2ClassA, ""],
    ["R2 class B", c["r2.class_b"] ?? 0, PRICES.r2ClassB, ""],
    ["Durable Object storage rows read", sum(c, /^do\..+\.storage_rows_read$/), PRICES.doRowRead, `${sum(c, /^do\..+\.storage_calls$/)} key-value and alarm calls: ${Object.entries(c).filter(([name]) => /^do\..+\.storage_calls$/.test(name)).map(([name, value]) => `${name.split(".")[1]} ${value}`).join(", ")}`],
    ["Durable Object storage rows written", sum(c, /^do\..+\.storage_rows_written$/), PRICES.doRowWritten, ""],
  ];
  // D1 bills rows, not queries; a query is the operation, its rows are shown beside it. The
  // objects' own storage is not in issue 12's list of operations: its calls are counted apart,
  // and its rows priced like D1's.
  const operations = rows.reduce((total, [name, count]) => total + (name.startsWith("D1 rows") || name.startsWith("Durable Object storage") ? 0 : count), 0) + (c["d1.queries"] ?? 0);
  const storageCalls = sum(c, /^do\..+\.storage_calls$/);
  const doGbSeconds = (sum(c, /^do\..+\.wall_ms$/) / 1000) * 0.128;
  const lines = ["| Operation | Count | Cost of 1,000 | Detail |", "|---|---|---|---|"];
  let total = 0;
  for (const [name, count, price, detail] of rows) {
    total += count * price * 1000;
    lines.push(`| ${name} | ${count} | $${(count * price * 1000).toFixed(4)} | ${detail} |`);
  }
  total += doGbSeconds * PRICES.doGbSecond * 1000;
  lines.push(`| Durable Object duration (wall time of calls × 128 MB) | ${doGbSeconds.toFixed(3)} GB-s | $${(doGbSeconds * PRICES.doGbSecond * 1000).toFixed(4)} | upper bound: hibernated SSE time is not billed |`);
  if (containerSeconds > 0) {
    total += containerSeconds * PRICES.containerSecond * 1000;
    lines.push(`| Container seconds (standard-2, upload to webhook) | ${containerSeconds.toFixed(1)} s | $${(containerSeconds * PRICES.containerSecond * 1000).toFixed(4)} | upper bound: CPU is billed when active |`);
  }
  lines.push(`| **Platform operations** (requests, D1 queries, DO requests, queue ops, R2 ops) | **${operations}** | | target ≤ ${TARGET_OPERATIONS}: ${operations <= TARGET_OPERATIONS ? "met" : "missed"} |`);
  lines.push(`| … and the Durable Objects' own storage calls (not in the target's list) | ${storageCalls} | | ${operations + storageCalls} with them |`);
  lines.push(`| **Cost of 1,000** | | **$${total.toFixed(4)}** | |`);
  return lines;
}

/** A webhook receiver on 127.0.0.1 that answers 200 and remembers which tasks it was told about. */
type Receiver = { url: string; delivered: (taskId: string, timeoutMs: number) => Promise<void>; close: () => Promise<void> };

async function webhookReceiver(): Promise<Receiver> {
  const bodies: string[] = [];
  const server: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      bodies.push(body);
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    async delivered(taskId, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (!bodies.some((body) => body.includes(taskId))) {
        if (Date.now() > deadline) throw new Error(`no webhook for ${taskId}`);
        await new Promise((done) => setTimeout(done, 50));
      }
    },
    close: () => new Promise((done) => server.close(() => done())),
  };
}
