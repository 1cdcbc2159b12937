import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useJobWorld } from "../helpers/job-world";
import { SECRET, type TestTranscoder, groupAlive, jobFor, postJob, slowCommand, startTranscoder, waitUntil } from "../helpers/transcoder";

const world = useJobWorld();

function expectProblem(response: { statusCode: number; headers: Record<string, unknown>; json(): Record<string, unknown> }, status: number, code: string): void {
  expect(response.statusCode).toBe(status);
  expect(response.headers["content-type"]).toMatch(/^application\/problem\+json/);
  expect(response.json()).toMatchObject({ status, code, type: expect.stringContaining("https://"), title: expect.any(String), detail: expect.any(String) });
}

describe("POST /jobs", () => {
  let transcoder: TestTranscoder;
  beforeAll(async () => (transcoder = await startTranscoder({ MAX_CONCURRENT_JOBS: "1", MAX_QUEUED_JOBS: "0" })));
  afterAll(async () => transcoder?.close());

  it.each([
    ["no Authorization header", undefined],
    ["a wrong secret", "Bearer not-the-secret"],
    ["the secret without the Bearer scheme", SECRET],
    ["a Basic scheme", `Basic ${Buffer.from(`x:${SECRET}`).toString("base64")}`],
    ["the secret with a suffix", `Bearer ${SECRET}x`],
  ])("answers 401 problem details for %s", async (_name, authorization) => {
    const response = await transcoder.app.inject({ method: "POST", url: "/jobs", headers: authorization ? { authorization } : {}, payload: jobFor(world.edge, "ffmpeg -i https://example.com/a.mp4 out.mp4") });
    expectProblem(response, 401, "UNAUTHORIZED");
    expect(response.headers["www-authenticate"]).toMatch(/^Bearer/);
  });

  it("answers 400 VALIDATION_FAILED for a body that is not a job", async () => {
    const response = await postJob(transcoder.app, { ...jobFor(world.edge, "ffmpeg -i https://example.com/a.mp4 out.mp4"), task_id: "../etc", timeout_seconds: -1 });
    expectProblem(response, 400, "VALIDATION_FAILED");
    expect(response.json().errors.map((error: { path: string }) => error.path).sort()).toEqual(["task_id", "timeout_seconds"]);
  });

  it("answers 400 INVALID_JSON for a broken body and 415 for a body that is not JSON", async () => {
    const broken = await transcoder.app.inject({ method: "POST", url: "/jobs", headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" }, payload: "{nope" });
    expectProblem(broken, 400, "INVALID_JSON");
    const text = await transcoder.app.inject({ method: "POST", url: "/jobs", headers: { authorization: `Bearer ${SECRET}`, "content-type": "text/plain" }, payload: "hello" });
    expectProblem(text, 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("accepts a run once: a redelivery is the same acceptance while it runs and answers 409 after it finished, and ffmpeg runs once", async () => {
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -t 1 out.mp4`);
    const hitsBefore = world.media.hits.filter((hit) => hit === "/clip.mp4").length;
    expect((await postJob(transcoder.app, job)).statusCode).toBe(202);
    expect((await postJob(transcoder.app, job)).statusCode).toBe(202);
    await world.edge.waitForTerminal(job.task_id);
    await waitUntil(() => transcoder.app.jobs.running === 0);
    expectProblem(await postJob(transcoder.app, job), 409, "TASK_NOT_RUNNABLE");
    expect(world.edge.events(job.task_id).filter((event) => event.type === "started")).toHaveLength(1);
    expect(world.edge.events(job.task_id).filter((event) => event.type === "completed")).toHaveLength(1);
    expect(world.media.hits.filter((hit) => hit === "/clip.mp4").length - hitsBefore).toBe(1);
  });

  it("answers 503 TRANSCODER_BUSY with Retry-After when every slot is taken, and logs no error for it", async () => {
    const running = jobFor(world.edge, slowCommand(world.media.url("/long.mp4")));
    expect((await postJob(transcoder.app, running)).statusCode).toBe(202);
    const response = await postJob(transcoder.app, jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} out.mp4`));
    expectProblem(response, 503, "TRANSCODER_BUSY");
    expect(Number(response.headers["retry-after"])).toBeGreaterThan(0);
    const errors = transcoder.logs.map((line) => JSON.parse(line) as { level: number; msg?: string }).filter((entry) => entry.level >= 50);
    expect(errors).toEqual([]);
    await transcoder.app.inject({ method: "DELETE", url: `/jobs/${running.task_id}`, headers: { authorization: `Bearer ${SECRET}` } });
    await world.edge.waitForTerminal(running.task_id);
  });
});

describe("POST /jobs while WORK_ROOT is short of space", () => {
  it("refuses a new job with 503 TRANSCODER_BUSY and Retry-After, saying why, before downloading anything; takes it once space is back", async () => {
    const transcoder = await startTranscoder();
    try {
      const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -t 1 out.mp4`);
      const hitsBefore = world.media.hits.length;
      const enough = transcoder.config.minFreeWorkBytes;
      transcoder.config.minFreeWorkBytes = Number.MAX_SAFE_INTEGER;
      const refused = await postJob(transcoder.app, job);
      expectProblem(refused, 503, "TRANSCODER_BUSY");
      expect(refused.json().detail).toMatch(/work space.*below MIN_FREE_WORK_BYTES/);
      expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
      expect(world.media.hits.length).toBe(hitsBefore);
      expect(world.edge.events(job.task_id)).toEqual([]);
      expect(await transcoder.leftovers()).toEqual([]);

      transcoder.config.minFreeWorkBytes = enough;
      expect((await postJob(transcoder.app, job)).statusCode).toBe(202);
      expect(await world.edge.waitForTerminal(job.task_id)).toMatchObject({ type: "completed" });
    } finally {
      await transcoder.close();
    }
  });
});

describe("GET /jobs/:task_id", () => {
  it("answers 200 while the job runs here and 404 once it is gone, so the edge can tell a lost run", async () => {
    const job = jobFor(world.edge, slowCommand(world.media.url("/long.mp4")));
    await postJob(world.transcoder.app, job);
    const running = await world.transcoder.app.inject({ method: "GET", url: `/jobs/${job.task_id}`, headers: { authorization: `Bearer ${SECRET}` } });
    expect(running.statusCode).toBe(200);
    expect(running.json()).toEqual({ running: true, run: 0, stage: "running" });
    await world.transcoder.app.inject({ method: "DELETE", url: `/jobs/${job.task_id}`, headers: { authorization: `Bearer ${SECRET}` } });
    await world.edge.waitForTerminal(job.task_id, 5_000);
    await waitUntil(() => world.transcoder.app.jobs.get(job.task_id) === undefined);
    expectProblem(await world.transcoder.app.inject({ method: "GET", url: `/jobs/${job.task_id}`, headers: { authorization: `Bearer ${SECRET}` } }), 404, "NOT_FOUND");
  });

  it("answers 401 without the secret", async () => {
    expectProblem(await world.transcoder.app.inject({ method: "GET", url: "/jobs/nope" }), 401, "UNAUTHORIZED");
  });
});

describe("DELETE /jobs/:task_id", () => {
  it("cancels a running job: ffmpeg's process group is gone within 2 s and the job fails CANCELED", async () => {
    const job = jobFor(world.edge, slowCommand(world.media.url("/long.mp4")));
    await postJob(world.transcoder.app, job);
    let pid: number | undefined;
    await waitUntil(() => (pid = world.transcoder.app.jobs.get(job.task_id)?.ffmpegPid) !== undefined);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const asked = Date.now();
    const response = await world.transcoder.app.inject({ method: "DELETE", url: `/jobs/${job.task_id}`, headers: { authorization: `Bearer ${SECRET}` } });
    expect(response.statusCode).toBe(202);
    expect(response.json()).toEqual({ canceled: true });
    expect(groupAlive(pid!)).toBe(false);
    const terminal = await world.edge.waitForTerminal(job.task_id, 2_000);
    expect(Date.now() - asked).toBeLessThan(2_000);
    expect(terminal).toMatchObject({ type: "failed", error_code: "CANCELED" });
    expect(world.edge.uploadRequests(job.task_id)).toEqual([]);
    expect(await world.transcoder.leftovers()).toEqual([]);
  });

  it("sends what ffmpeg wrote until the cancel with the report, ending with why it stops there", async () => {
    const job = jobFor(world.edge, slowCommand(world.media.url("/long.mp4")));
    await postJob(world.transcoder.app, job);
    await waitUntil(() => world.edge.events(job.task_id).some((event) => event.type === "progress"));
    await world.transcoder.app.inject({ method: "DELETE", url: `/jobs/${job.task_id}`, headers: { authorization: `Bearer ${SECRET}` } });
    const terminal = await world.edge.waitForTerminal(job.task_id);
    if (terminal.type !== "failed") throw new Error(JSON.stringify(terminal));
    expect(terminal.error_code).toBe("CANCELED");
    expect(terminal.log).toMatch(/Input #0[^]*Output #0, mp4, to 'slow\.mp4'/);
    expect(terminal.log!.endsWith("\n[ffedge] ffmpeg was stopped: The task was canceled.\n")).toBe(true);
    expect(terminal.log).not.toContain(world.transcoder.workRoot);
  });

  it("answers 404 for a task that is not running here", async () => {
    const response = await world.transcoder.app.inject({ method: "DELETE", url: "/jobs/nope", headers: { authorization: `Bearer ${SECRET}` } });
    expectProblem(response, 404, "NOT_FOUND");
  });

  it("answers 401 without the secret", async () => {
    expectProblem(await world.transcoder.app.inject({ method: "DELETE", url: "/jobs/nope" }), 401, "UNAUTHORIZED");
  });
});

describe("unknown routes", () => {
  it("answer 404 problem details", async () => {
    const transcoder = await startTranscoder();
    try {
      expectProblem(await transcoder.app.inject({ method: "GET", url: "/nothing-here?x=1" }), 404, "NOT_FOUND");
    } finally {
      await transcoder.close();
    }
  });
});

describe("shutting down", () => {
  it("refuses new jobs with 503, stops running ones after the grace period and hands them back to the edge", async () => {
    const transcoder = await startTranscoder();
    try {
      const job = jobFor(world.edge, slowCommand(world.media.url("/long.mp4")));
      await postJob(transcoder.app, job);
      let pid: number | undefined;
      await waitUntil(() => (pid = transcoder.app.jobs.get(job.task_id)?.ffmpegPid) !== undefined);
      const stopped = transcoder.app.jobs.shutdown(300);
      const refused = await postJob(transcoder.app, jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} out.mp4`));
      expectProblem(refused, 503, "TRANSCODER_BUSY");
      expect(refused.headers["retry-after"]).toBeDefined();
      const health = await transcoder.app.inject({ method: "GET", url: "/health" });
      expect(health.statusCode).toBe(503);
      expect(health.json()).toMatchObject({ status: "draining", running: 1 });
      await stopped;
      expect(groupAlive(pid!)).toBe(false);
      expect(world.edge.events(job.task_id).at(-1)).toMatchObject({ type: "handed_back", reason: expect.stringContaining("shut down") });
      expect(world.edge.events(job.task_id).some((event) => event.type === "failed")).toBe(false);
      expect(await transcoder.leftovers()).toEqual([]);
    } finally {
      await transcoder.close();
    }
  });
});

describe("runs of a task", () => {
  const auth = { authorization: `Bearer ${SECRET}` };
  const ask = (method: "GET" | "DELETE", taskId: string, run: number, headers: Record<string, string> = {}) =>
    world.transcoder.app.inject({ method, url: `/jobs/${taskId}?run=${run}`, headers: { ...auth, ...headers } });

  it("takes the next run of a task that ran here (a retry after a pause) and runs it", async () => {
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -t 1 out.mp4`, { run: 0 });
    expect((await postJob(world.transcoder.app, job)).statusCode).toBe(202);
    await world.edge.waitForTerminal(job.task_id);
    await waitUntil(() => world.transcoder.app.jobs.get(job.task_id) === undefined);
    expectProblem(await postJob(world.transcoder.app, job), 409, "TASK_NOT_RUNNABLE");
    expect((await postJob(world.transcoder.app, { ...job, run: 1 })).statusCode).toBe(202);
    await waitUntil(() => world.edge.events(job.task_id).filter((event) => event.type === "completed").length === 2, 20_000);
  });

  it("replaces a running run with a newer one, stopping the old ffmpeg, and refuses the older run again with 409", async () => {
    const job = jobFor(world.edge, slowCommand(world.media.url("/long.mp4")), { run: 0 });
    await postJob(world.transcoder.app, job);
    let pid: number | undefined;
    await waitUntil(() => (pid = world.transcoder.app.jobs.get(job.task_id)?.ffmpegPid) !== undefined);
    expect((await postJob(world.transcoder.app, { ...job, run: 1 })).statusCode).toBe(202);
    await waitUntil(() => !groupAlive(pid!), 5_000);
    expectProblem(await postJob(world.transcoder.app, job), 409, "TASK_NOT_RUNNABLE");
    expectProblem(await ask("GET", job.task_id, 0), 404, "NOT_FOUND");
    expect((await ask("GET", job.task_id, 1)).json()).toMatchObject({ run: 1, stage: "running" });
    expectProblem(await ask("DELETE", job.task_id, 0), 404, "NOT_FOUND");
    expect(world.transcoder.app.jobs.get(job.task_id)?.runNumber).toBe(1);
    expect((await ask("DELETE", job.task_id, 1)).statusCode).toBe(202);
    await waitUntil(() => world.transcoder.app.jobs.get(job.task_id) === undefined);
  });

  it("cancels on a DELETE that declares JSON but has no body, as the edge's fetch may send it", async () => {
    const emptyBodies: Record<string, string>[] = [{ "content-type": "application/json" }, { "content-type": "application/json", "content-length": "0" }];
    for (const headers of emptyBodies) {
      const job = jobFor(world.edge, slowCommand(world.media.url("/long.mp4")));
      await postJob(world.transcoder.app, job);
      const response = await ask("DELETE", job.task_id, 0, headers);
      expect(response.statusCode, response.body).toBe(202);
      expect(await world.edge.waitForTerminal(job.task_id, 5_000)).toMatchObject({ type: "failed", error_code: "CANCELED" });
    }
  });

  it("answers 400 VALIDATION_FAILED for a run that is not a number", async () => {
    expectProblem(await world.transcoder.app.inject({ method: "GET", url: "/jobs/nope?run=x", headers: auth }), 400, "VALIDATION_FAILED");
  });
});

describe("an edge outage as a job ends", () => {
  it("keeps retrying a finished job's uploads and terminal report through it, answering GET with stage reporting until the edge takes the end", async () => {
    const transcoder = await startTranscoder({}, { terminalGiveUpMs: 60_000 });
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -t 1 out.mp4`, { run: 0 });
    const stage = async () => {
      const response = await transcoder.app.inject({ method: "GET", url: `/jobs/${job.task_id}?run=0`, headers: { authorization: `Bearer ${SECRET}` } });
      return response.statusCode === 200 ? (response.json() as { stage: string }).stage : response.statusCode;
    };
    try {
      world.edge.uploadStatus = 503;
      world.edge.failNextEvents(1_000_000);
      await postJob(transcoder.app, job);
      // Far longer than the three quick tries that used to give the outputs up.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(await stage()).toBe("running");
      world.edge.uploadStatus = undefined;
      await waitUntil(() => world.edge.uploads.has(`${job.task_id}/out.mp4`), 10_000);
      await waitUntil(async () => (await stage()) === "reporting", 5_000);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await stage()).toBe("reporting");
      world.edge.failNextEvents(0);
      expect(await world.edge.waitForTerminal(job.task_id, 10_000)).toMatchObject({ type: "completed" });
      await waitUntil(async () => (await stage()) === 404, 5_000);
    } finally {
      world.edge.uploadStatus = undefined;
      world.edge.failNextEvents(0);
      await transcoder.close();
    }
  });
});
