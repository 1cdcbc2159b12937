import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Stack, uploadLocalFile } from "../../scripts/lib/local-stack";
import { makeClip, mediaDir } from "../../scripts/lib/media";
import { submitTask, waitForEnd } from "./helpers";

// The edge stores no file above MAX_UPLOAD_BYTES; an output crossing it is stopped while ffmpeg
// writes it, not encoded to the end and refused at upload (issue 18, item 19).
const FILE_CAP = 4 * 1024 * 1024;

describe("the output cap on the real stack", () => {
  let stack: Stack;
  let key: string;
  let dir: string;
  let clipUrl: string;
  beforeAll(async () => {
    stack = await Stack.start({ edgeVars: { MAX_UPLOAD_BYTES: String(FILE_CAP) } });
    ({ key } = await stack.createUser());
    dir = await mediaDir();
    clipUrl = (await uploadLocalFile(stack, key, await makeClip(dir, "clip.mp4", { seconds: 10 }))).url;
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("fails OUTPUT_LIMIT_EXCEEDED as soon as one output passes the edge's file limit, storing nothing", async () => {
    // Uncompressed 720p: 1.4 MB a frame, 350 MB in all; the cap is crossed within three frames.
    const response = await submitTask(stack, key, { command: `ffmpeg -i ${clipUrl} -vf scale=1280:720 -c:v rawvideo big.mkv` });
    expect(response.status).toBe(201);
    const { task_id } = (await response.json()) as { task_id: string };
    const { task } = await waitForEnd(stack, key, task_id, 60_000);
    expect(task.status).toBe("failed");
    expect(task.error_code, task.error).toBe("OUTPUT_LIMIT_EXCEEDED");
    expect(task.error).toContain(`${FILE_CAP} bytes for one file`);
    expect(task.outputs ?? []).toEqual([]);
  }, 120_000);
});
