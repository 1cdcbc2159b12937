import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { parseFilterArguments, parseFilterGraph } from "../../../shared/ffmpeg/filter-graph";
import { buildArgv, checkCommand } from "../../../shared/ffmpeg/index";
import { argvOf, IN, SERVICE_PREFIX } from "./helpers";

const SUBS = "https://example.com/subs.srt";

describe("buildArgv", () => {
  it("puts the service's options first, then each input's options before its local copy, then the outputs", () => {
    expect(argvOf(`ffmpeg -loglevel verbose -ss 1 -i ${IN} -c:v libx264 -crf 23 out.mp4`)).toEqual([
      ...SERVICE_PREFIX,
      "-loglevel", "verbose",
      "-ss", "1", "-protocol_whitelist", "file", "-i", "/job/in/0",
      "-c:v", "libx264", "-crf", "23", "/job/out/out.mp4",
    ]);
  });

  it.each(["-loglevel error", "-v quiet", "-v warning", "-loglevel repeat+level+fatal", "-v panic"])(
    "leaves out %s, which would hide the stream information the runtime guard reads",
    (level) => {
      const argv = argvOf(`ffmpeg ${level} -i ${IN} out.mp4`);
      expect(argv.filter((word) => word === "-loglevel" || word === "-v")).toEqual([]);
      expect(argv.slice(0, SERVICE_PREFIX.length)).toEqual(SERVICE_PREFIX);
    },
  );

  it("keeps inputs and outputs in command order", () => {
    const argv = argvOf(`ffmpeg -i ${IN} a.mp4 -i https://example.com/b.mp4 -map 1 c.mp4`);
    expect(argv.filter((word) => word.startsWith("/job/"))).toEqual(["/job/in/0", "/job/in/1", "/job/out/a.mp4", "/job/out/c.mp4"]);
  });

  it("places files named by -hls_segment_filename and -segment_list in the output folder", () => {
    expect(argvOf(`ffmpeg -i ${IN} -f hls -hls_segment_filename seg_%03d.ts index.m3u8`)).toEqual(
      expect.arrayContaining(["-hls_segment_filename", "/job/out/seg_%03d.ts", "/job/out/index.m3u8"]),
    );
    expect(argvOf(`ffmpeg -i ${IN} -f segment -segment_list parts.m3u8 part_%03d.ts`)).toEqual(expect.arrayContaining(["-segment_list", "/job/out/parts.m3u8"]));
  });

  it("leaves names that the HLS muxer places next to its playlist as they are", () => {
    expect(argvOf(`ffmpeg -i ${IN} -f hls -master_pl_name master.m3u8 -hls_segment_type fmp4 -hls_fmp4_init_filename init.mp4 index.m3u8`)).toEqual(
      expect.arrayContaining(["-master_pl_name", "master.m3u8", "-hls_fmp4_init_filename", "init.mp4"]),
    );
  });

  it("re-writes filter graphs from what was checked", () => {
    const argv = argvOf(`ffmpeg -i ${IN} -vf "drawtext=text='Hello, world':x=10" out.mp4`);
    expect(argv).toContain("drawtext=text=Hello\\,\\ world:x=10");
  });

  it.each([
    [`subtitles=${SUBS}`, "subtitles=/job/in/1"],
    [`subtitles=${SUBS}:force_style='Fontsize=30'`, "subtitles=/job/in/1:force_style=Fontsize=30"],
    [`subtitles=filename='${SUBS.replace(":", "\\:")}'`, "subtitles=filename=/job/in/1"],
    [`subtitles=f='${SUBS.replace(":", "\\:")}':si=0`, "subtitles=f=/job/in/1:si=0"],
    [`scale=320:-2,subtitles=${SUBS}`, "scale=320:-2,subtitles=/job/in/1"],
  ])("points %s at the local copy of that input", (graph, expected) => {
    expect(argvOf(`ffmpeg -i ${IN} -i ${SUBS} -vf "${graph}" out.mp4`)).toContain(expected);
  });

  it("points ass= and filter_complex subtitles at the local copy too", () => {
    const ass = "https://example.com/styled.ass";
    expect(argvOf(`ffmpeg -i ${ass} -i ${IN} -filter_complex "[1:v]ass=${ass}[v]" -map [v] out.mp4`)).toContain("[1:v]ass=/job/in/0[v]");
  });

  it("escapes a local path that needs it, so ffmpeg reads exactly that path", () => {
    const parsed = checkCommand(`ffmpeg -i ${IN} -i ${SUBS} -vf subtitles=${SUBS} out.mp4`);
    const path = "/job/in/it's: [1], ok;";
    const argv = buildArgv(parsed, { inputPaths: ["/job/in/0", path], outputDir: "/job/out/" });
    const node = parseFilterGraph(argv[argv.indexOf("-vf") + 1]!).chains[0]![0]!;
    expect(parseFilterArguments(node.args!)).toEqual([{ value: path }]);
    expect(argv.at(-1)).toBe("/job/out/out.mp4");
  });

  it("refuses to build an argv without a local path for every input", () => {
    const parsed = checkCommand(`ffmpeg -i ${IN} out.mp4`);
    expect(() => buildArgv(parsed, { inputPaths: [], outputDir: "/job/out" })).toThrow(AppError);
  });
});
