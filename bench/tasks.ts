/**
 * `npm run bench -- tasks [--runs 5]`
 *
 * Issue 12's table, on the real local stack (Worker in workerd + Fastify transcoder), side by
 * side with the same ffmpeg command run directly on the same local file in the same run:
 * (1) a 2 s 640x360 clip → x264: overhead (POST /v1/tasks to the SSE `completed` event, minus
 *     direct ffmpeg) ≤ 100 ms, medians;
 * (2) 20 s of 720p → x264: overhead ≤ 3 %;
 * (3) 20 short tasks submitted at once against the same 20 commands run directly with the
 *     transcoder's concurrency: ≤ 1.10×;
 * (4) progress latency, from the transcoder reading ffmpeg's progress line (its debug log,
 *     same clock) to the SSE client receiving that percent: median ≤ 250 ms.
 * Also prints where a short task's time goes inside the transcoder (its "job finished" phases)
 * and the load average with every number: other work on the same cores moves them.
 * Measured twice: with every process on every core (as `npm start` runs it), then in the
 * production layout, where the edge and its local simulators are off the transcoder's core
 * (on Cloudflare they are not on the container's CPU at all) and direct ffmpeg gets that core too.
 *
 * `--containers [--warm 2]`: the same rows in the production topology (`npm run start:containers`: one
 * TranscoderContainer per task through the Worker's outbound handlers), plus the stack's ready
 * time, the image's size, the first task after start on its own, and each short task's wait
 * before its run (`total_elapsed − elapsed`). The short row's target there is issue 19's: within
 * 300 ms of raw ffmpeg (warm), with the first (cold) task reported on its own.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { makeClip } from "../scripts/lib/media";
import { Stack, authed, uploadLocalFile } from "../scripts/lib/local-stack";
import { type ContainerBenchStack, startContainerBenchStack } from "./lib/container-stack";

const run = promisify(execFile);
const SHORT_ARGS = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "28", "-c:a", "aac"];
const LONG_ARGS = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "23", "-c:a", "aac"];

interface Case {
  name: string;
  url: string;
  local: string;
  args: string[];
}

/** One task through the service: its time, and when each SSE progress percent arrived. */
interface ServiceRun {
  ms: number;
  taskId: string;
  progress: { percent: number; at: number }[];
}

/** What the rows need of a stack: its API and its transcoders' log lines. */
interface BenchTarget {
  fetch(path: string, init?: RequestInit): Promise<Response>;
  transcoderLines(): string[];
}

function localTarget(stack: Stack): BenchTarget {
  return { fetch: (path, init) => stack.fetch(path, init), transcoderLines: () => stack.transcoders.flatMap((transcoder) => transcoder.logs.join("").split("\n")) };
}

export async function runTasksBenchmark(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { runs: { type: "string", default: "5" }, containers: { type: "boolean", default: false }, warm: { type: "string", default: "2" } } });
  const runs = Number(values.runs);
  if (values.containers) return runContainerTasksBenchmark(runs, Number(values.warm));
  const concurrency = availableParallelism();
  const dir = await mkdtemp(join(tmpdir(), "ffedge-bench-tasks-"));
  const loadBefore = load();
  const stack = await Stack.start({ edgeVars: { MAX_RUNNING_TASKS_PER_USER: "100" }, transcoderEnv: { MAX_CONCURRENT_JOBS: String(concurrency), LOG_LEVEL: "debug" } });
  try {
    const { key } = await stack.createUser();
    const shortLocal = await makeClip(dir, "short.mp4", { seconds: 2, size: "640x360" });
    const longLocal = await makeClip(dir, "long.mp4", { seconds: 20, size: "1280x720" });
    const short: Case = { name: "2 s clip, 640x360 → x264", url: (await uploadLocalFile(stack, key, shortLocal)).url, local: shortLocal, args: SHORT_ARGS };
    const long: Case = { name: "20 s 720p → x264", url: (await uploadLocalFile(stack, key, longLocal)).url, local: longLocal, args: LONG_ARGS };
    const world: World = { stack: localTarget(stack), key, dir, runs, concurrency, short, long, cpu: true, shortTargetMs: 100 };

    const lines = [`Machine: ${concurrency} cores; transcoder concurrency ${concurrency}; ${runs} runs each; medians. Load average before: ${loadBefore}.`];
    const results: Record<string, unknown> = {};
    lines.push("", "**Shared cores** (as `npm start` runs it: workerd with the local D1, R2, Durable Objects and Queue on the same cores as the transcoder and its ffmpeg):", "");
    const shared = await measure(world, []);
    lines.push(...shared.lines);
    results.shared = shared.results;
    // In production the edge runs on Cloudflare's network and the transcoder in a container of
    // its own: the layout below gives the transcoder and its ffmpeg one core, the same core the
    // direct ffmpeg runs get, and workerd (with every local simulator) and this client the other.
    const cores = await splitCores(stack, concurrency);
    if (cores) {
      lines.push("", `**Production layout** (the transcoder, its ffmpeg and the direct ffmpeg runs on core ${cores.transcoder}; workerd with the local simulators and this client on core ${cores.edge}; the same parallelism, ${concurrency} at a time):`, "");
      const split = await measure(world, ["taskset", "-c", String(cores.transcoder)]);
      lines.push(...split.lines);
      results.production = split.results;
    } else {
      lines.push("", "Production layout: not measured (needs 2 cores and taskset).");
    }
    lines.push(`Load average after: ${load()}.`);

    const report = lines.join("\n");
    process.stdout.write(`${report}\n`);
    await mkdir("bench/results", { recursive: true });
    await writeFile("bench/results/tasks.json", JSON.stringify({ date: new Date().toISOString(), loadBefore, results }, null, 2));
    await writeFile("bench/results/tasks.md", `${report}\n`);
  } finally {
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The rows through containers. Direct ffmpeg runs on this machine's cores with the same
 * parallelism as the local rows; the containers share those cores with workerd, as on a laptop
 * (on Cloudflare each container has its own vCPUs), which the load average beside each row shows.
 */
async function runContainerTasksBenchmark(runs: number, warm: number): Promise<void> {
  const concurrency = availableParallelism();
  const dir = await mkdtemp(join(tmpdir(), "ffedge-bench-tasks-"));
  const loadBefore = load();
  const stack = await startContainerBenchStack({ vars: { WARM_CONTAINERS: String(warm) } });
  try {
    const { key } = stack;
    const upload = async (path: string) => (await uploadLocalFile(stack, key, path)).url;
    const shortLocal = await makeClip(dir, "short.mp4", { seconds: 2, size: "640x360" });
    const longLocal = await makeClip(dir, "long.mp4", { seconds: 20, size: "1280x720" });
    const short: Case = { name: "2 s clip, 640x360 → x264", url: await upload(shortLocal), local: shortLocal, args: SHORT_ARGS };
    const long: Case = { name: "20 s 720p → x264", url: await upload(longLocal), local: longLocal, args: LONG_ARGS };

    // The first task after start, on its own: what a user meets first (the image's first start,
    // or a warm container if the pool filled in the meantime).
    const directFirst = await direct(short, dir, []);
    const first = await throughService(stack, key, short);
    const firstWait = await waitBeforeRun(stack, key, first.taskId);
    const lines = [
      `Machine: ${concurrency} cores; ${runs} runs each; medians; WARM_CONTAINERS=${warm}. Load average before: ${loadBefore}.`,
      `Edge ready with its image (${stack.imageBuilt ? "built now" : "from Docker's cache"}): ${(stack.readyMs / 1000).toFixed(1)} s. Image ${stack.image}: ${(stack.imageBytes / 1e6).toFixed(0)} MB.`,
      `First task after start (2 s clip): ${Math.round(first.ms)} ms through ffedge against ${Math.round(directFirst)} ms direct; total_elapsed − elapsed ${firstWait} ms.`,
      "",
      "**Containers** (one TranscoderContainer per task through the Worker's outbound handlers; the containers share this machine's cores with workerd):",
      "",
    ];
    // Issue 19's target for the production topology: a short task within 300 ms of raw ffmpeg.
    const measured = await measure({ stack, key, dir, runs, concurrency, short, long, cpu: false, shortTargetMs: 300 }, []);
    lines.push(...measured.lines);
    const shortRuns = measured.serviceRuns[short.name]!;
    const waits = await Promise.all(shortRuns.map((serviceRun) => waitBeforeRun(stack, key, serviceRun.taskId)));
    lines.push(`Short tasks, submission → completed (ms): ${shortRuns.map((serviceRun) => Math.round(serviceRun.ms)).join(", ")}; total_elapsed − elapsed (ms): ${waits.join(", ")}.`);
    lines.push(`Load average after: ${load()}.`);

    const report = lines.join("\n");
    process.stdout.write(`${report}\n`);
    await mkdir("bench/results", { recursive: true });
    const results = { warmContainers: warm, readyMs: stack.readyMs, image: stack.image, imageBytes: stack.imageBytes, first: { directMs: directFirst, serviceMs: first.ms, waitMs: firstWait }, shortWaitsMs: waits, ...measured.results };
    await writeFile("bench/results/tasks-containers.json", JSON.stringify({ date: new Date().toISOString(), loadBefore, results }, null, 2));
    await writeFile("bench/results/tasks-containers.md", `${report}\n`);
  } finally {
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The task's `total_elapsed − elapsed` in ms: the time from submission to its run's start. */
async function waitBeforeRun(stack: ContainerBenchStack, key: string, taskId: string): Promise<number> {
  const task = (await (await stack.fetch(`/v1/tasks/${taskId}`, authed(key))).json()) as { elapsed: string | null; total_elapsed: string | null };
  return Math.round((Number(task.total_elapsed) - Number(task.elapsed)) * 1000);
}

interface World {
  stack: BenchTarget;
  /** Whether the stack's processes descend from this one (not so for containers), so their CPU time can be read. */
  cpu: boolean;
  /** The short row's target: ms over direct ffmpeg. */
  shortTargetMs: number;
  key: string;
  dir: string;
  runs: number;
  concurrency: number;
  short: Case;
  long: Case;
}

/** Issue 12's four rows, the CPU split and the transcoder's phases, with direct ffmpeg run under `prefix`. */
async function measure(world: World, prefix: string[]): Promise<{ lines: string[]; results: Record<string, unknown>; serviceRuns: Record<string, ServiceRun[]> }> {
  const { stack, key, dir, runs, concurrency, short, long, cpu: withCpu, shortTargetMs } = world;
  const lines = ["| Case | Direct ffmpeg | Through ffedge | Result | Target | | Load (1 min) |", "|---|---|---|---|---|---|---|"];
  const results: Record<string, unknown> = {};
  const cpuLines = ["", "CPU time per task, which other load does not inflate (direct: the ffmpeg process; ffedge: every process of the stack — workerd, the local R2/D1, the transcoder, its ffmpeg):", "", "| Case | Direct ffmpeg | Whole ffedge stack | Added by ffedge | Stack by process (ms) |", "|---|---|---|---|---|"];
  const serviceRuns: Record<string, ServiceRun[]> = {};
  for (const [entry, runsFor, target] of [[short, runs, shortTargetMs], [long, Math.max(2, Math.ceil(runs / 2)), 3]] as const) {
    await direct(entry, dir, prefix);
    await throughService(stack, key, entry);
    const directTimes: number[] = [];
    const measured: ServiceRun[] = [];
    const cpu = { direct: 0, service: 0, byProcess: {} as Record<string, number> };
    for (let i = 0; i < runsFor; i++) {
      let before = await cpuMs();
      directTimes.push(await direct(entry, dir, prefix));
      cpu.direct += (await cpuMs()).children - before.children;
      before = await cpuMs();
      measured.push(await throughService(stack, key, entry));
      const after = await cpuMs();
      cpu.service += after.descendants - before.descendants;
      for (const [name, ms] of Object.entries(after.byProcess)) cpu.byProcess[name] = (cpu.byProcess[name] ?? 0) + ms - (before.byProcess[name] ?? 0);
    }
    const d = median(directTimes);
    const s = median(measured.map((m) => m.ms));
    const overhead = entry === short ? s - d : ((s - d) / d) * 100;
    const sign = overhead >= 0 ? "+" : "";
    const shown = entry === short ? `${sign}${Math.round(overhead)} ms` : `${sign}${overhead.toFixed(1)} %`;
    const unit = entry === short ? "ms" : "%";
    lines.push(`| ${entry.name} | ${Math.round(d)} ms | ${Math.round(s)} ms | ${shown} | ≤ ${target} ${unit} | ${verdict(overhead <= target)} | ${load1()} |`);
    const split = Object.entries(cpu.byProcess).filter(([, ms]) => ms / runsFor >= 1).sort((a, b) => b[1] - a[1]).map(([name, ms]) => `${name} ${Math.round(ms / runsFor)}`).join(", ");
    cpuLines.push(`| ${entry.name} | ${Math.round(cpu.direct / runsFor)} ms | ${Math.round(cpu.service / runsFor)} ms | +${Math.round((cpu.service - cpu.direct) / runsFor)} ms | ${split} |`);
    results[entry.name] = { directMs: directTimes, serviceMs: measured.map((m) => m.ms), load: load1(), cpuPerTaskMs: { direct: cpu.direct / runsFor, service: cpu.service / runsFor } };
    serviceRuns[entry.name] = measured;
  }

  const batch = Array.from({ length: 20 }, () => short);
  const directBatch = await timed(() => pool(batch, concurrency, (entry) => direct(entry, dir, prefix)));
  const batchStart = Date.now();
  let batchRuns: ServiceRun[] = [];
  const serviceBatch = await timed(async () => {
    batchRuns = await Promise.all(batch.map((entry) => throughService(stack, key, entry)));
  });
  const batchEnd = Date.now();
  const ratio = serviceBatch / directBatch;
  lines.push(`| 20 short tasks at once (direct: ${concurrency} at a time) | ${Math.round(directBatch)} ms | ${Math.round(serviceBatch)} ms | ${ratio.toFixed(2)}× | ≤ 1.10× | ${verdict(ratio <= 1.1)} | ${load1()} |`);

  const logs = transcoderLog(stack.transcoderLines());
  const gaps = ffmpegGaps(logs, batchRuns.map((m) => m.taskId), batchStart, batchEnd);
  results.batch = { directMs: directBatch, serviceMs: serviceBatch, load: load1(), ffmpegGapsMs: gaps };
  const latencies = progressLatencies(serviceRuns[long.name]!, logs);
  const latency = latencies.length > 0 ? median(latencies) : Number.NaN;
  lines.push(`| progress latency ffmpeg → SSE (${latencies.length} events, 20 s case) | | | ${Math.round(latency)} ms | ≤ 250 ms | ${verdict(latency <= 250)} | ${load1()} |`);
  results.progressLatencyMs = latencies;

  if (withCpu) lines.push(...cpuLines);
  const phases = phaseMedians(logs, serviceRuns[short.name]!.map((m) => m.taskId));
  // A container is removed as its task ends, sometimes before Docker hands over its last lines.
  if (Object.keys(phases).length > 0) lines.push("", `Inside the transcoder, a short task (medians, ms): ${Object.entries(phases).map(([phase, ms]) => `${phase} ${ms}`).join(", ")}.`);
  else lines.push("", "Inside the transcoder: no \"job finished\" line of the short tasks was read.");
  if (!Number.isNaN(gaps.beforeFirst)) lines.push(`The 20 tasks at once: the first ffmpeg started ${gaps.beforeFirst} ms after the submissions began, no ffmpeg ran for ${gaps.idleBetween} ms in between, and the last event came ${gaps.afterLast} ms after the last ffmpeg ended.`);
  results.phasesMs = phases;
  return { lines, results, serviceRuns };
}

/**
 * Pins the transcoder (every thread; the ffmpeg it starts inherits the mask) to the last core and
 * everything else of the stack, and this process, to the others. Undefined when there is only
 * one core or no taskset.
 */
async function splitCores(stack: Stack, cores: number): Promise<{ transcoder: number; edge: string } | undefined> {
  if (cores < 2) return undefined;
  const transcoder = cores - 1;
  const edge = cores === 2 ? "0" : `0-${cores - 2}`;
  const transcoderPids = new Set(stack.transcoders.map((t) => t.process.pid!));
  const parents = await parentMap();
  const ours = new Set([process.pid]);
  try {
    for (const pid of parents.keys()) {
      if (transcoderPids.has(pid)) await run("taskset", ["-a", "-p", "-c", String(transcoder), String(pid)]);
      else if (isBelow(parents, pid, ours) && !isBelow(parents, pid, transcoderPids)) await run("taskset", ["-a", "-p", "-c", edge, String(pid)]);
    }
    await run("taskset", ["-a", "-p", "-c", edge, String(process.pid)]);
  } catch {
    return undefined;
  }
  return { transcoder, edge };
}

/** Whether `pid` descends from one of `ancestors`, by a map of each process's parent. */
function isBelow(parents: ReadonlyMap<number, number>, pid: number, ancestors: ReadonlySet<number>): boolean {
  for (let current = parents.get(pid); current !== undefined && current > 1; current = parents.get(current)) if (ancestors.has(current)) return true;
  return false;
}

async function parentMap(): Promise<Map<number, number>> {
  const parents = new Map<number, number>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => undefined);
    if (stat) parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
  }
  return parents;
}

async function direct(entry: Case, dir: string, prefix: readonly string[]): Promise<number> {
  const out = join(dir, `direct-${crypto.randomUUID()}.mp4`);
  const command = [...prefix, "ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", entry.local, ...entry.args, out];
  const ms = await timed(() => run(command[0]!, command.slice(1)));
  await rm(out, { force: true });
  return ms;
}

/** Submit, then read the task's event stream to its end: no polling interval in the measurement. */
async function throughService(stack: Pick<BenchTarget, "fetch">, key: string, entry: Case): Promise<ServiceRun> {
  const start = performance.now();
  const created = await stack.fetch("/v1/tasks", authed(key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ command: `ffmpeg -i ${entry.url} ${entry.args.join(" ")} out.mp4` }) }));
  if (created.status !== 201) throw new Error(`POST /v1/tasks answered ${created.status}: ${await created.text()}`);
  const { task_id: taskId } = (await created.json()) as { task_id: string };
  const response = await stack.fetch(`/v1/tasks/${taskId}/events`, authed(key));
  const progress: ServiceRun["progress"] = [];
  let text = "";
  let completed = false;
  const decoder = new TextDecoder();
  for await (const chunk of response.body!) {
    const at = Date.now();
    text += decoder.decode(chunk as Uint8Array, { stream: true });
    let end: number;
    while ((end = text.indexOf("\n\n")) >= 0) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      const event = /^event: (\w+)/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (event === "progress" && data) progress.push({ percent: (JSON.parse(data) as { progress: number }).progress, at });
      if (event === "completed") completed = true;
    }
  }
  if (!completed) throw new Error(`task ${taskId} did not complete: ${text.slice(-500)}`);
  return { ms: performance.now() - start, taskId, progress };
}

/** The transcoder's JSON log lines (pino: `time` in ms since the epoch, same clock as ours). */
function transcoderLog(lines: readonly string[]): Record<string, unknown>[] {
  return lines
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

/**
 * For each SSE progress event, the time since the transcoder read the ffmpeg progress line that
 * first reached that percent (the edge shows whole-percent changes, so it is matched by value).
 */
function progressLatencies(runs: readonly ServiceRun[], logs: readonly Record<string, unknown>[]): number[] {
  const latencies: number[] = [];
  for (const { taskId, progress } of runs) {
    const lines = logs.filter((entry) => entry.task_id === taskId && entry.msg === "ffmpeg progress") as { progress: number; time: number }[];
    for (const event of progress) {
      const source = lines.find((line) => Math.abs(line.progress - event.percent) < 0.01 || Math.floor(line.progress) === Math.floor(event.percent));
      if (source && event.at >= source.time) latencies.push(event.at - source.time);
    }
  }
  return latencies;
}

function phaseMedians(logs: readonly Record<string, unknown>[], taskIds: readonly string[]): Record<string, number> {
  const finished = logs.filter((entry) => entry.msg === "job finished" && taskIds.includes(entry.task_id as string)).map((entry) => entry.phases_ms as Record<string, number>);
  const names = [...new Set(finished.flatMap((phases) => Object.keys(phases)))];
  return Object.fromEntries(names.map((name) => [name, Math.round(median(finished.map((phases) => phases[name] ?? 0)))]));
}

/**
 * When no ffmpeg of the batch ran: before the first started, between runs, after the last ended
 * (from the transcoder's "job finished" lines: its time, less the upload and report phases, is
 * when ffmpeg ended; less the ffmpeg phase, when it started).
 */
function ffmpegGaps(logs: readonly Record<string, unknown>[], taskIds: readonly string[], start: number, end: number): { beforeFirst: number; idleBetween: number; afterLast: number } {
  const runs = logs
    .filter((entry) => entry.msg === "job finished" && taskIds.includes(entry.task_id as string))
    .map((entry) => {
      const phases = entry.phases_ms as Record<string, number>;
      const ended = (entry.time as number) - (phases.report ?? 0) - (phases.upload ?? 0) - (phases.metadata ?? 0);
      return { started: ended - (phases.ffmpeg ?? 0), ended };
    })
    .sort((a, b) => a.started - b.started);
  if (runs.length === 0) return { beforeFirst: Number.NaN, idleBetween: Number.NaN, afterLast: Number.NaN };
  let idleBetween = 0;
  let reach = runs[0]!.ended;
  for (const run of runs.slice(1)) {
    if (run.started > reach) idleBetween += run.started - reach;
    reach = Math.max(reach, run.ended);
  }
  return { beforeFirst: runs[0]!.started - start, idleBetween: Math.round(idleBetween), afterLast: end - reach };
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

/**
 * CPU time so far, in ms: of this process's reaped children (direct ffmpeg runs), and of every
 * process descending from this one that still runs plus what they reaped (the stack).
 */
async function cpuMs(): Promise<{ children: number; descendants: number; byProcess: Record<string, number> }> {
  const ticks = 1000 / 100; // USER_HZ is 100 on Linux
  const stats = new Map<number, { name: string; parent: number; own: number; reaped: number }>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => undefined);
    if (!stat) continue;
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    // Node names its main thread "MainThread"; the transcoder is known by its entry file.
    const cmdline = ["node", "MainThread", "workerd"].includes(name) ? await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "") : "";
    // wrangler's dev proxy is a workerd of its own in front of the Worker's, on the edge's port.
    const label = cmdline.includes("transcoder/server.ts") ? "transcoder" : name === "workerd" && /entry=127\.0\.0\.1:[1-9]/.test(cmdline) ? "workerd (dev proxy)" : name;
    stats.set(Number(entry), { name: label, parent: Number(fields[1]), own: (Number(fields[11]) + Number(fields[12])) * ticks, reaped: (Number(fields[13]) + Number(fields[14])) * ticks });
  }
  const parents = new Map([...stats].map(([pid, stat]) => [pid, stat.parent]));
  const ours = new Set([process.pid]);
  let descendants = 0;
  const byProcess: Record<string, number> = {};
  for (const [pid, stat] of stats) {
    if (!isBelow(parents, pid, ours)) continue;
    descendants += stat.own + stat.reaped;
    byProcess[stat.name] = (byProcess[stat.name] ?? 0) + stat.own;
    // What the transcoder reaped is its ffmpeg/ffprobe runs with their sandbox chain.
    if (stat.reaped > 0) byProcess[`${stat.name}'s children`] = (byProcess[`${stat.name}'s children`] ?? 0) + stat.reaped;
  }
  return { children: stats.get(process.pid)?.reaped ?? 0, descendants, byProcess };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function verdict(met: boolean): string {
  return met ? "met" : "**missed**";
}

function load(): string {
  return loadavg().map((value) => value.toFixed(2)).join(", ");
}

function load1(): string {
  return loadavg()[0]!.toFixed(2);
}
