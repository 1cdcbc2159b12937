import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Clips, makeClips } from "../transcoder/helpers/media";
import { ContainerStack, ended, until } from "./stack";

const run = promisify(execFile);
const MAX_INSTANCES = 2;
/** Long enough for the 20-second task below on two busy cores; its SIGTERM grace is this plus a minute. */
const TIMEOUT_SECONDS = 300;

let clips: Clips;
let stack: ContainerStack;
let key: string;

beforeAll(async () => {
  clips = await makeClips();
  stack = await ContainerStack.start({ "clip.mp4": clips.clip, "long.mp4": clips.long }, {}, {
    WARM_CONTAINERS: "1",
    CONTAINER_MAX_INSTANCES: String(MAX_INSTANCES),
    TASK_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS),
    MAX_RUNNING_TASKS_PER_USER: "20",
  });
  key = await stack.createUser();
});

afterAll(async () => {
  await stack?.stop();
  await clips?.remove();
});

const submit = (command: string) => stack.submit(key, command);
const task = (id: string) => stack.task(key, id);
const shortCommand = (n: number) => `ffmpeg -i ${stack.inputUrl("clip.mp4")} -vf scale=${96 + 2 * n}:-2 -c:v libx264 -preset ultrafast out.mp4`;

describe("the warm container pool (WARM_CONTAINERS=1, CONTAINER_MAX_INSTANCES=2)", () => {
  it("starts the deployment's first task cold, and fills the pool as it does", async () => {
    const id = await submit(shortCommand(0));
    expect(await until("the task to end", () => task(id), ended)).toMatchObject({ status: "completed", retries: 0 });
    await until("the warm container", () => stack.containers(), (ids) => ids.length === 1, 180_000);
  });

  it("runs a task in the container started before it came, removes that container after, and starts another", async () => {
    const [warm] = await until("the warm container", () => stack.containers(), (ids) => ids.length === 1, 180_000);
    const id = await submit(shortCommand(0));
    const done = await until("the task to end", () => task(id), ended);
    expect(done).toMatchObject({ status: "completed", retries: 0 });
    // The pre-started container ran the task: it is gone once the task ended, and a fresh one waits.
    const after = await until("the pool to refill", () => stack.containers(), (ids) => ids.length === 1 && !ids.includes(warm!), 120_000);
    expect(after).not.toContain(warm);
  });

  it("runs 12 tasks with never more than max_instances containers: the others wait in line and all complete", { timeout: 900_000 }, async () => {
    const ids = await Promise.all(Array.from({ length: 12 }, (_, n) => submit(shortCommand(n + 1))));
    let most = 0;
    const tasks = await until("all 12 tasks to end", async () => {
      most = Math.max(most, (await stack.containers()).length);
      return Promise.all(ids.map(task));
    }, (all) => all.every(ended), 840_000);
    expect(tasks.filter((t) => t.status !== "completed"), JSON.stringify(tasks)).toEqual([]);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(MAX_INSTANCES);
  });

  it("finishes a running task whose container gets SIGTERM (a rollout), without a retry", { timeout: (TIMEOUT_SECONDS + 120) * 1000 }, async () => {
    const before = new Set(await until("just the warm container", () => stack.containers(), (ids) => ids.length === 1, 180_000));
    const id = await submit(`ffmpeg -i ${stack.inputUrl("long.mp4")} -t 1 -vf scale=1920:1080,minterpolate=fps=60 -c:v libx264 -preset ultrafast out.mp4`);
    await until("the task to run", () => task(id), (t) => t.status === "running" && t.progress > 0);
    // The container running the task: the one that was warm before (the pool started another since).
    const running = (await stack.containers()).filter((container) => before.has(container));
    expect(running).toHaveLength(1);
    await run("docker", ["kill", "--signal", "TERM", running[0]!]);
    const done = await until("the task to end", () => task(id), ended, TIMEOUT_SECONDS * 1000);
    expect(done, JSON.stringify(done)).toMatchObject({ status: "completed", progress: 100, retries: 0 });
  });

  it("leaves no container of this stack behind once its tasks ended, apart from the warm one", async () => {
    const left = await until("only the warm container", () => stack.containers(), (ids) => ids.length <= 1, 120_000);
    expect(left.length).toBeLessThanOrEqual(1);
  });
});
