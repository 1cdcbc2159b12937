/**
 * `npm run bench -- tasks [--runs 5]`
 *
 * (1) Overhead: time from POST /v1/tasks to `completed` minus the time of the same ffmpeg
 *     command run directly on the same local file, for a 2 s clip and a 20 s 720p x264
 *     transcode. Targets: ≤ 150 ms median on the short one, ≤ 5 % on the long one.
 * (2) 20 tasks submitted at once, against the same 20 commands run directly with the
 *     transcoder's concurrency. Target: ≤ 1.10×.
 * Everything runs on the real local stack (Worker in workerd + Fastify transcoder).
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { makeClip } from "../scripts/lib/media";
import { Stack, authed, uploadLocalFile } from "../scripts/lib/local-stack";

const run = promisify(execFile);
const SHORT_ARGS = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "28", "-c:a", "aac"];
const LONG_ARGS = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-c:a", "aac"];

interface Case {
  name: string;
  url: string;
  local: string;
  args: string[];
}

export async function runTasksBenchmark(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { runs: { type: "string", default: "5" } } });
  const runs = Number(values.runs);
  const concurrency = availableParallelism();
  const dir = await mkdtemp(join(tmpdir(), "ffedge-bench-tasks-"));
  const stack = await Stack.start({ edgeVars: { MAX_RUNNING_TASKS_PER_USER: "100" }, transcoderEnv: { MAX_CONCURRENT_JOBS: String(concurrency), LOG_LEVEL: "warn" } });
  try {
    const { key } = await stack.createUser();
    const shortLocal = await makeClip(dir, "short.mp4", { seconds: 2, size: "640x360" });
    const longLocal = await makeClip(dir, "long.mp4", { seconds: 20, size: "1280x720" });
    const short: Case = { name: "2 s clip, 640x360 → x264", url: (await uploadLocalFile(stack, key, shortLocal)).url, local: shortLocal, args: SHORT_ARGS };
    const long: Case = { name: "20 s 720p → x264", url: (await uploadLocalFile(stack, key, longLocal)).url, local: longLocal, args: LONG_ARGS };

    const lines = [`Machine: ${concurrency} cores; transcoder concurrency ${concurrency}; ${runs} runs each; medians.`, ""];
    lines.push("| Case | Direct ffmpeg | Through ffedge | Overhead | Target |", "|---|---|---|---|---|");
    const results: Record<string, unknown> = {};
    for (const [entry, runsFor, target] of [[short, runs, "≤ 150 ms"], [long, Math.max(2, Math.ceil(runs / 2)), "≤ 5 %"]] as const) {
      await direct(entry, dir);
      await throughService(stack, key, entry);
      const directTimes: number[] = [];
      const serviceTimes: number[] = [];
      for (let i = 0; i < runsFor; i++) {
        directTimes.push(await direct(entry, dir));
        serviceTimes.push(await throughService(stack, key, entry));
      }
      const d = median(directTimes);
      const s = median(serviceTimes);
      const overhead = entry === short ? `${Math.round(s - d)} ms` : `${(((s - d) / d) * 100).toFixed(1)} %`;
      lines.push(`| ${entry.name} | ${Math.round(d)} ms | ${Math.round(s)} ms | ${overhead} | ${target} |`);
      results[entry.name] = { directMs: directTimes, serviceMs: serviceTimes };
    }

    const batch = Array.from({ length: 20 }, () => short);
    const directBatch = await timed(() => pool(batch, concurrency, (entry) => direct(entry, dir)));
    const serviceBatch = await timed(() => Promise.all(batch.map((entry) => throughService(stack, key, entry))));
    lines.push("", "| 20 tasks at once (2 s clips) | Direct, " + concurrency + " at a time | Through ffedge | Ratio | Target |", "|---|---|---|---|---|");
    lines.push(`| | ${Math.round(directBatch)} ms | ${Math.round(serviceBatch)} ms | ${(serviceBatch / directBatch).toFixed(2)}× | ≤ 1.10× |`);
    results.batch = { directMs: directBatch, serviceMs: serviceBatch };

    const report = lines.join("\n");
    process.stdout.write(`${report}\n`);
    await mkdir("bench/results", { recursive: true });
    await writeFile("bench/results/tasks.json", JSON.stringify({ date: new Date().toISOString(), results }, null, 2));
    await writeFile("bench/results/tasks.md", `${report}\n`);
  } finally {
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function direct(entry: Case, dir: string): Promise<number> {
  const out = join(dir, `direct-${crypto.randomUUID()}.mp4`);
  const ms = await timed(() => run("ffmpeg", ["-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", entry.local, ...entry.args, out]));
  await rm(out, { force: true });
  return ms;
}

/** Submit, then wait on the task's event stream for its end: no polling interval in the measurement. */
async function throughService(stack: Stack, key: string, entry: Case): Promise<number> {
  return timed(async () => {
    const created = await stack.fetch("/v1/tasks", authed(key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ command: `ffmpeg -i ${entry.url} ${entry.args.join(" ")} out.mp4` }) }));
    if (created.status !== 201) throw new Error(`POST /v1/tasks answered ${created.status}: ${await created.text()}`);
    const { task_id } = (await created.json()) as { task_id: string };
    const events = await (await stack.fetch(`/v1/tasks/${task_id}/events`, authed(key))).text();
    if (!events.includes("event: completed")) throw new Error(`task ${task_id} did not complete: ${events.slice(-500)}`);
  });
}

async function pool<T>(items: T[], size: number, work: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: size }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

async function timed(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
