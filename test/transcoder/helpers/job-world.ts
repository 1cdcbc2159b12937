import { afterAll, beforeAll } from "vitest";
import { type Clips, makeClips } from "./media";
import { type EdgeStub, type Handler, type MediaServer, serveFile, startEdgeStub, startMediaServer } from "./servers";
import { type TestTranscoder, startTranscoder } from "./transcoder";

/** What a job test runs against: the test clips, a media server for its inputs, a stub of the edge and a real transcoder. */
export interface JobWorld {
  clips: Clips;
  media: MediaServer;
  edge: EdgeStub;
  transcoder: TestTranscoder;
}

/**
 * Starts a JobWorld before the file's tests and stops it after them. The media server serves
 * `/clip.mp4` and `/long.mp4` plus `routes`; the transcoder runs with `env`. The fields are set
 * once the file's beforeAll hooks have run, so read them inside tests, never at the top level.
 */
export function useJobWorld(options: { routes?: (clips: Clips) => Record<string, Handler>; env?: Record<string, string> } = {}): JobWorld {
  const world = {} as JobWorld;
  beforeAll(async () => {
    world.clips = await makeClips();
    world.media = await startMediaServer({ "/clip.mp4": serveFile(world.clips.clip, "video/mp4"), "/long.mp4": serveFile(world.clips.long, "video/mp4"), ...options.routes?.(world.clips) });
    world.edge = await startEdgeStub();
    world.transcoder = await startTranscoder(options.env);
  });
  afterAll(async () => {
    await world.transcoder?.close();
    await world.edge?.close();
    await world.media?.close();
    await world.clips?.remove();
  });
  return world;
}
