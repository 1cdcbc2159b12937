/**
 * `npm run bench -- load [--uploads 200] [--clients 50] [--tasks 100] [--timeout 900]`
 *
 * The reliability pass's load, bounded and on loopback only: `--uploads` uploads (multipart,
 * base64 and URL, 10 KB–2 MB) from `--clients` concurrent clients while two users submit
 * `--tasks` two-second transcodes at once; then a third user submits one task. Prints requests
 * by status, tasks final / stuck, uploads verified by md5 (the stored bytes downloaded again),
 * and the time to drain against the ffmpeg work divided by the transcoder's concurrency.
 * Targets: 0 lost, 0 stuck, 0 5xx, drain ≤ 1.5 × work / concurrency.
 */
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { Stack, authed, uploadLocalFile } from "../scripts/lib/local-stack";
import { makeClip } from "../scripts/lib/media";

const run = promisify(execFile);
/** About two seconds of CPU per task (10 s of 720p through x264 veryfast). */
const TASK_ARGS = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "28", "-c:a", "aac"];
const METHODS = ["multipart", "base64", "url"] as const;
type Method = (typeof METHODS)[number];

interface Upload {
  method: Method;
  md5: string;
  url?: string;
  status: number;
}

export async function runLoadBenchmark(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { uploads: { type: "string", default: "200" }, clients: { type: "string", default: "50" }, tasks: { type: "string", default: "100" }, timeout: { type: "string", default: "900" } },
  });
  const uploads = Number(values.uploads);
  const clients = Number(values.clients);
  const taskCount = Number(values.tasks);
  const timeoutMs = Number(values.timeout) * 1000;
  const concurrency = availableParallelism();
  const dir = await mkdtemp(join(tmpdir(), "ffedge-bench-load-"));
  const stack = await Stack.start({ transcoderEnv: { MAX_CONCURRENT_JOBS: String(concurrency), LOG_LEVEL: "warn" } });
  const statuses = new Map<string, number>();
  const count = (kind: string, response: Response) => {
    const label = `${kind} ${response.status}${response.status >= 500 && !response.headers.get("content-type")?.includes("problem+json") ? " (not problem+json)" : ""}`;
    statuses.set(label, (statuses.get(label) ?? 0) + 1);
  };
  try {
    const [alice, bob, carol] = [await stack.createUser("load-a"), await stack.createUser("load-b"), await stack.createUser("load-c")];
    const clip = await makeClip(dir, "clip.mp4", { seconds: 10, size: "1280x720" });
    const clipUrl = (await uploadLocalFile(stack, alice.key, clip)).url;
    const workSeconds = (await directSeconds(clip, dir, concurrency)) * taskCount;
    const clipBytes = await readFile(clip);
    const sourceUrl = (await uploadLocalFile(stack, alice.key, clip)).url;
    const sourceMd5 = md5(clipBytes);

    const started = Date.now();
    const submit = async (key: string): Promise<string | undefined> => {
      const response = await stack.fetch("/v1/tasks", authed(key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ command: `ffmpeg -i ${clipUrl} ${TASK_ARGS.join(" ")} out.mp4` }) }));
      count("POST /v1/tasks", response);
      return response.status === 201 ? ((await response.json()) as { task_id: string }).task_id : undefined;
    };
    const tasksPromise = Promise.all(Array.from({ length: taskCount }, (_, i) => submit(i % 2 === 0 ? alice.key : bob.key)));
    const done: Upload[] = [];
    let next = 0;
    const uploader = async (client: number) => {
      const key = [alice.key, bob.key, carol.key][client % 3]!;
      while (next < uploads) {
        const index = next++;
        const method = METHODS[index % METHODS.length]!;
        done.push(await upload(stack, key, method, method === "url" ? { url: sourceUrl, md5: sourceMd5 } : randomBytes(10_240 + Math.floor(Math.random() * (2 * 1024 * 1024 - 10_240))), count));
      }
    };
    await Promise.all(Array.from({ length: clients }, (_, client) => uploader(client)));
    const taskIds = (await tasksPromise).filter((id): id is string => id !== undefined);
    const uploadsSeconds = (Date.now() - started) / 1000;
    const carolTask = await submit(carol.key);

    const owners = new Map<string, string>(taskIds.map((id, i) => [id, i % 2 === 0 ? alice.key : bob.key]));
    if (carolTask) owners.set(carolTask, carol.key);
    const final = new Map<string, { status: string; error_code?: string }>();
    const deadline = started + timeoutMs;
    while (final.size < owners.size && Date.now() < deadline) {
      for (const key of [alice.key, bob.key, carol.key]) {
        for (const status of ["completed", "failed"]) {
          for (let offset = 0; ; offset += 100) {
            const response = await stack.fetch(`/v1/tasks?status=${status}&limit=100&offset=${offset}`, authed(key));
            if (response.status !== 200) break;
            const page = (await response.json()) as { total: number; tasks: { task_id: string; status: string; error_code?: string }[] };
            for (const task of page.tasks) final.set(task.task_id, task);
            if (offset + 100 >= page.total) break;
          }
        }
      }
      if (final.size < owners.size) await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const drainSeconds = (Date.now() - started) / 1000;

    let verified = 0;
    for (const entry of done.filter((item) => item.status === 201 && item.url)) {
      const response = await fetch(entry.url!);
      if (response.ok && md5(new Uint8Array(await response.arrayBuffer())) === entry.md5) verified++;
    }
    const failedCodes = new Map<string, number>();
    for (const task of final.values()) if (task.status === "failed") failedCodes.set(task.error_code ?? "?", (failedCodes.get(task.error_code ?? "?") ?? 0) + 1);
    const stuck = [...owners.keys()].filter((id) => !final.has(id));
    const fiveXx = [...statuses].filter(([label]) => / 5\d\d/.test(label)).reduce((sum, [, n]) => sum + n, 0);
    const target = (1.5 * workSeconds) / concurrency;

    const lines = [
      `Machine: ${concurrency} cores; transcoder concurrency ${concurrency}; ${uploads} uploads from ${clients} clients; ${taskCount} tasks by 2 users, then 1 by a third.`,
      "",
      "Requests by status:",
      ...[...statuses].sort().map(([label, n]) => `  ${label}: ${n}`),
      "",
      `Tasks: ${owners.size} accepted, ${final.size} final (${[...final.values()].filter((task) => task.status === "completed").length} completed, failed: ${JSON.stringify(Object.fromEntries(failedCodes))}), ${stuck.length} stuck${stuck.length ? ` (${stuck.slice(0, 5).join(", ")}…)` : ""}.`,
      `Third user's task: ${carolTask ? (final.get(carolTask)?.status ?? "stuck") : "not accepted"}.`,
      `Uploads: ${done.filter((item) => item.status === 201).length} of ${uploads} stored; ${verified} verified by md5 (downloaded again); uploads phase ${uploadsSeconds.toFixed(1)} s.`,
      `Drain: ${drainSeconds.toFixed(1)} s; ffmpeg work ${workSeconds.toFixed(1)} s / ${concurrency} = ${(workSeconds / concurrency).toFixed(1)} s; target ≤ ${target.toFixed(1)} s.`,
      `Verdict: lost ${uploads - verified + (taskCount - taskIds.length)}, stuck ${stuck.length}, 5xx ${fiveXx}, drain ${drainSeconds <= target ? "within" : "OVER"} target.`,
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
  } finally {
    await stack.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

async function upload(stack: Stack, key: string, method: Method, content: Uint8Array | { url: string; md5: string }, count: (kind: string, response: Response) => void): Promise<Upload> {
  let response: Response;
  let digest: string;
  if (content instanceof Uint8Array) {
    digest = md5(content);
    if (method === "multipart") {
      const form = new FormData();
      form.append("file", new Blob([content], { type: "application/octet-stream" }), "load.bin");
      response = await stack.fetch("/api/upload/file", authed(key, { method: "POST", body: form }));
    } else {
      const data = `data:application/octet-stream;base64,${Buffer.from(content).toString("base64")}`;
      response = await stack.fetch("/api/upload/base64", authed(key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ data }) }));
    }
  } else {
    digest = content.md5;
    response = await stack.fetch("/api/upload/url", authed(key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url: content.url }) }));
  }
  count(`POST upload (${method})`, response);
  const body = (await response.json().catch(() => ({}))) as { url?: string; md5?: string };
  return { method, md5: digest, url: body.md5 === digest ? body.url : undefined, status: response.status };
}

/**
 * Seconds of ffmpeg work per task: a sample of the tasks' command run directly on a local copy
 * of the input, `concurrency` at a time as the transcoder runs them, times `concurrency`.
 */
async function directSeconds(clip: string, dir: string, concurrency: number): Promise<number> {
  const sample = 3 * concurrency;
  const start = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async (_, slot) => {
    while (next < sample) {
      next++;
      await run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", "-i", clip, ...TASK_ARGS, join(dir, `direct-${slot}.mp4`)]);
    }
  }));
  return ((performance.now() - start) / 1000 / sample) * concurrency;
}

function md5(bytes: Uint8Array): string {
  return createHash("md5").update(bytes).digest("hex");
}
