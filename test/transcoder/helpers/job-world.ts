import { chmod, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { type Clips, makeClips } from "./media";
import { type EdgeStub, type Handler, type MediaServer, serveFile, startEdgeStub, startMediaServer } from "./servers";
import { type TestTranscoder, startTranscoder } from "./transcoder";

/** What a job needs around a transcoder: the test clips, a media server for its inputs and a stub of the edge. */
export interface JobInputs {
  clips: Clips;
  media: MediaServer;
  edge: EdgeStub;
}

/** JobInputs and a real transcoder in this process. */
export interface JobWorld extends JobInputs {
  transcoder: TestTranscoder;
}

interface InputOptions {
  /** Served beside `/clip.mp4` and `/long.mp4`. */
  routes?: (clips: Clips) => Record<string, Handler>;
}

/**
 * Starts JobInputs before the file's (or the describe block's) tests and stops them after.
 * The fields are set once the beforeAll hooks have run, so read them inside tests, never at the
 * top level.
 */
export function useJobInputs(options: InputOptions = {}): JobInputs {
  const inputs = {} as JobInputs;
  beforeAll(async () => {
    inputs.clips = await makeClips();
    inputs.media = await startMediaServer({ "/clip.mp4": serveFile(inputs.clips.clip, "video/mp4"), "/long.mp4": serveFile(inputs.clips.long, "video/mp4"), ...options.routes?.(inputs.clips) });
    inputs.edge = await startEdgeStub();
  });
  afterAll(async () => {
    await inputs.edge?.close();
    await inputs.media?.close();
    await inputs.clips?.remove();
  });
  return inputs;
}

/** useJobInputs plus a transcoder started with `env` (after hooks run in reverse: it stops first). */
export function useJobWorld(options: InputOptions & { env?: Record<string, string> } = {}): JobWorld {
  const world = useJobInputs(options) as JobWorld;
  beforeAll(async () => {
    world.transcoder = await startTranscoder(options.env);
  });
  afterAll(async () => {
    await world.transcoder?.close();
  });
  return world;
}

/**
 * A temporary folder the jobs' own uids can read (mode 755), made before the tests and removed
 * after them. `path` is set once the beforeAll hooks have run.
 */
export function useReadableDir(prefix: string): { path: string } {
  const dir = { path: "" };
  beforeAll(async () => {
    dir.path = await mkdtemp(path.join(os.tmpdir(), prefix));
    await chmod(dir.path, 0o755);
  });
  afterAll(async () => {
    if (dir.path) await rm(dir.path, { recursive: true, force: true });
  });
  return dir;
}
