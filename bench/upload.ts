/**
 * `npm run bench -- upload [--size-mb 300] [--base64-mb 32] [--runs 3]`
 *
 * Throughput and peak workerd memory of one large upload through each storage path, next to a
 * same-run baseline that pipes the request body straight into R2.put. Everything runs locally:
 * the Worker as `wrangler dev` runs it (unstable_startWorker), the baseline as a separate
 * bench-only Worker on the same local R2, and a Node origin for URL uploads.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ROOT } from "../scripts/keys";
import { BLOCK_BYTES, type Sent, sendFile, sendJson, startOrigin } from "./lib/http";
import { type Stack, startStack } from "./lib/stack";
import { measureRss } from "./lib/workerd-memory";

const MB = 1_000_000;
const TARGET_THROUGHPUT_RATIO = 0.9;
const TARGET_MEMORY_GROWTH_BYTES = 64 * 1024 * 1024;

interface Sample {
  path: string;
  bytes: number;
  seconds: number;
  memoryGrowthBytes: number;
  peakRssBytes: number;
}

type Upload = (size: number) => Promise<Sent>;

function expectCreated(path: string, sent: Sent): Sent {
  if (sent.status !== 201) throw new Error(`${path} answered ${sent.status}: ${sent.body.slice(0, 300)}`);
  return sent;
}

/** Each path as a client would use it, timed from the first byte sent to the stored record. */
function uploadPaths(stack: Stack, originUrl: (size: number) => string): Record<string, Upload> {
  const auth = { authorization: `Bearer ${stack.apiKey}` };
  return {
    "baseline (body → R2.put)": (size) => sendFile(`${stack.baselineUrl}/bench/${crypto.randomUUID()}.mp4`, { method: "PUT", size }),
    "multipart POST /api/upload/file": (size) => {
      const boundary = `----bench${crypto.randomUUID()}`;
      return sendFile(`${stack.edgeUrl}/api/upload/file`, {
        method: "POST",
        headers: { ...auth, "content-type": `multipart/form-data; boundary=${boundary}` },
        size,
        prefix: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="bench.mp4"\r\nContent-Type: video/mp4\r\n\r\n`,
        suffix: `\r\n--${boundary}--\r\n`,
      });
    },
    "signed PUT (sign + PUT upload_url)": async (size) => {
      const signed = await sendJson(`${stack.edgeUrl}/v1/uploads/sign`, { filename: "bench.mp4", size, content_type: "video/mp4" }, auth);
      const { upload_url: uploadUrl } = JSON.parse(signed.body) as { upload_url: string };
      const put = await sendFile(uploadUrl, { method: "PUT", headers: { "content-type": "video/mp4" }, size });
      return { ...put, seconds: put.seconds + signed.seconds };
    },
    "URL POST /api/upload/url": (size) => sendJson(`${stack.edgeUrl}/api/upload/url`, { url: originUrl(size) }, auth),
  };
}

function base64Upload(stack: Stack): Upload {
  return (size) => sendFile(`${stack.edgeUrl}/api/upload/base64`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.apiKey}`, "content-type": "application/json" },
    size,
    base64: true,
    prefix: '{"data":"data:video/mp4;base64,',
    suffix: '"}',
  });
}

async function sample(stack: Stack, path: string, upload: Upload, size: number): Promise<Sample> {
  const { result, beforeBytes, peakBytes } = await measureRss(async () => expectCreated(path, await upload(size)));
  return { path, bytes: size, seconds: result.seconds, memoryGrowthBytes: peakBytes - beforeBytes, peakRssBytes: peakBytes };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

interface Summary {
  path: string;
  sizeMb: number;
  throughputMbPerSecond: number;
  ofBaseline: number;
  peakGrowthMiB: number;
  peakRssMiB: number;
}

function summarize(samples: Sample[], baselineThroughput: number): Summary[] {
  const paths = [...new Set(samples.map((entry) => entry.path))];
  return paths.map((path) => {
    const runs = samples.filter((entry) => entry.path === path);
    const throughput = median(runs.map((entry) => entry.bytes / MB / entry.seconds));
    return {
      path,
      sizeMb: runs[0]!.bytes / MB,
      throughputMbPerSecond: throughput,
      ofBaseline: throughput / baselineThroughput,
      peakGrowthMiB: Math.max(...runs.map((entry) => entry.memoryGrowthBytes)) / 1024 / 1024,
      peakRssMiB: Math.max(...runs.map((entry) => entry.peakRssBytes)) / 1024 / 1024,
    };
  });
}

function table(summaries: Summary[], runs: number): string {
  const rows = summaries.map((s) => {
    const throughputOk = s.path.startsWith("baseline") || s.path.startsWith("base64") || s.ofBaseline >= TARGET_THROUGHPUT_RATIO;
    const memoryOk = s.peakGrowthMiB * 1024 * 1024 < TARGET_MEMORY_GROWTH_BYTES;
    return `| ${s.path} | ${s.sizeMb.toFixed(0)} MB | ${s.throughputMbPerSecond.toFixed(1)} MB/s | ${(s.ofBaseline * 100).toFixed(0)} %${throughputOk ? "" : " ✗"} | ${s.peakGrowthMiB.toFixed(1)} MiB${memoryOk ? "" : " ✗"} | ${s.peakRssMiB.toFixed(0)} MiB |`;
  });
  return [
    `Median throughput of ${runs} runs. RSS is summed over all workerd processes of the bench; growth is peak minus the level just before the upload, the largest over the runs (✗: target missed).`,
    "",
    "| Path | Size | Throughput | Of baseline | Peak RSS growth | Peak RSS |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
  ].join("\n");
}

function warmUpTable(warmUp: Sample[]): string {
  return [
    "| Path | Throughput | Peak RSS growth |",
    "| --- | --- | --- |",
    ...warmUp.map((entry) => `| ${entry.path} | ${(entry.bytes / MB / entry.seconds).toFixed(1)} MB/s | ${(entry.memoryGrowthBytes / 1024 / 1024).toFixed(1)} MiB |`),
  ].join("\n");
}

export async function runUploadBenchmark(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { "size-mb": { type: "string", default: "300" }, "base64-mb": { type: "string", default: "32" }, runs: { type: "string", default: "3" } } });
  const size = Math.round(Number(values["size-mb"]) * MB);
  // Base64 arrives as one JSON document, which the Worker must hold whole: a smaller file.
  const base64Size = Math.max(1, Math.round((Number(values["base64-mb"]) * MB) / BLOCK_BYTES)) * BLOCK_BYTES;
  const runs = Number(values.runs);

  const loadBefore = loadavg()[0]!;
  const stack = await startStack();
  const origin = await startOrigin();
  try {
    const paths = uploadPaths(stack, origin.url);
    // wrangler starts each Worker's runtime on its first request: start them before measuring.
    for (const [path, upload] of Object.entries(paths)) expectCreated(path, await upload(MB));
    // V8 grows its heap during a runtime's first large transfer: reported apart from the runs.
    const warmUp: Sample[] = [];
    for (const [path, upload] of Object.entries(paths)) warmUp.push(await sample(stack, path, upload, size));
    warmUp.push(await sample(stack, "base64 POST /api/upload/base64", base64Upload(stack), base64Size));
    const samples: Sample[] = [];
    // Rounds interleave the paths so background load affects them alike.
    for (let round = 0; round < runs; round++) {
      for (const [path, upload] of Object.entries(paths)) {
        samples.push(await sample(stack, path, upload, size));
        process.stderr.write(`  ${path}: ${(size / MB / samples.at(-1)!.seconds).toFixed(1)} MB/s\n`);
      }
      samples.push(await sample(stack, "base64 POST /api/upload/base64", base64Upload(stack), base64Size));
    }
    const baselineThroughput = median(samples.filter((entry) => entry.path.startsWith("baseline")).map((entry) => entry.bytes / MB / entry.seconds));
    const summaries = summarize(samples, baselineThroughput);
    const machine = `${availableParallelism()} CPUs, 1-minute load average ${loadBefore.toFixed(1)} before and ${loadavg()[0]!.toFixed(1)} after.`;
    process.stdout.write(`${machine}\n${table(summaries, runs)}\n\nFirst (warm-up) upload of each path, on a fresh runtime:\n\n${warmUpTable(warmUp)}\n`);
    await mkdir(join(ROOT, "bench", "results"), { recursive: true });
    const file = join(ROOT, "bench", "results", `upload-${new Date().toISOString().replaceAll(":", "-")}.json`);
    await writeFile(file, `${JSON.stringify({ size, base64Size, runs, summaries, samples, warmUp }, null, 2)}\n`);
    process.stderr.write(`Raw samples: ${file}\n`);
  } finally {
    await origin.close();
    await stack.stop();
  }
}
