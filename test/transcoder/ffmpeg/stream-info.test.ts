import { describe, expect, it } from "vitest";
import { type FileFacts, type StreamFacts, StreamInfoParser } from "../../../transcoder/ffmpeg/stream-info";

const STDERR = `Input #0, mov,mp4,m4a,3gp,3g2,mj2, from '/job/in/input-0':
  Metadata:
    title           : Stream #0:9: Video: h264, 99999x99999
                    : Duration: 99:00:00.00
  Duration: 00:00:04.00, start: 0.000000, bitrate: 193 kb/s
  Stream #0:0[0x1](und): Video: h264 (High 4:4:4 Predictive) (avc1 / 0x31637661), yuv444p(progressive), 160x120 [SAR 1:1 DAR 4:3], 115 kb/s, 29.97 fps, 25 tbr, 12800 tbn (default)
  Stream #0:1[0x2](und): Audio: aac (LC) (mp4a / 0x6134706D), 44100 Hz, mono, fltp, 69 kb/s (default)
Stream mapping:
  Stream #0:0 -> #0:0 (h264 (native) -> h264 (libx264))
[libx264 @ 0x55] using cpu capabilities: MMX2
Output #0, mp4, to '/job/out/out.mp4':
  Stream #0:0(und): Video: h264 (avc1 / 0x31637661), yuv420p(tv, bt709, progressive), 1920x1080 [SAR 1:1 DAR 16:9], q=2-31, 25 fps, 12800 tbn (default)
  Stream #0:1(und): Audio: aac (LC) (mp4a / 0x6134706D), 96000 Hz, stereo, fltp, 128 kb/s
`;

describe("StreamInfoParser", () => {
  it("reads inputs' duration and streams and outputs' streams, in chunks of any size", () => {
    for (const size of [1, 7, 64, STDERR.length]) {
      const inputs: [number, FileFacts][] = [];
      const outputs: [number, StreamFacts][] = [];
      const parser = new StreamInfoParser({ onInput: (index, facts) => inputs.push([index, structuredClone(facts)]), onOutputStream: (index, stream) => outputs.push([index, stream]) });
      for (let at = 0; at < STDERR.length; at += size) parser.push(STDERR.slice(at, at + size));
      expect(parser.inputs).toEqual([
        {
          format: "mov,mp4,m4a,3gp,3g2,mj2",
          durationSeconds: 4,
          streams: [{ kind: "video", width: 160, height: 120, frameRate: 29.97 }, { kind: "audio", sampleRate: 44100 }],
        },
      ]);
      expect(outputs).toEqual([[0, { kind: "video", width: 1920, height: 1080, frameRate: 25 }], [0, { kind: "audio", sampleRate: 96000 }]]);
    }
  });

  it("never takes a metadata value (chosen by a file's author) for a stream or a duration", () => {
    const parser = new StreamInfoParser({});
    parser.push(STDERR);
    expect(parser.inputs[0]?.streams.some((stream) => stream.width === 99999)).toBe(false);
    expect(parser.inputs[0]?.durationSeconds).toBe(4);
  });
});
