import { describe, expect, it } from "vitest";
import { buildArgv, checkCommand } from "../../../shared/ffmpeg/index";
import { AUDIO, IMAGE, REAL_WORLD_COMMANDS, SUBTITLES, VIDEO, VIDEO2 } from "./corpus";
import { SERVICE_PREFIX } from "./helpers";

const FIXTURE_URLS = new Set([VIDEO, VIDEO2, AUDIO, IMAGE, SUBTITLES]);

describe("the real-world corpus", () => {
  it("has at least 32 commands with distinct names", () => {
    expect(REAL_WORLD_COMMANDS.length).toBeGreaterThanOrEqual(32);
    expect(new Set(REAL_WORLD_COMMANDS.map((entry) => entry.name)).size).toBe(REAL_WORLD_COMMANDS.length);
  });

  describe.each(REAL_WORLD_COMMANDS)("$name", ({ command, outputs }) => {
    const run = () => {
      const parsed = checkCommand(command);
      const inputPaths = parsed.inputs.map((_, index) => `/job/in/${index}`);
      return { parsed, inputPaths, argv: buildArgv(parsed, { inputPaths, outputDir: "/job/out" }) };
    };

    it("is accepted, with the expected outputs, reading only the fixture URLs", () => {
      const { parsed } = run();
      expect(parsed.outputs.map((output) => output.filename)).toEqual(outputs);
      for (const input of parsed.inputs) expect(FIXTURE_URLS).toContain(input.url);
    });

    it("starts with the service's options and reads each input from its local copy through the file protocol", () => {
      const { argv, inputPaths } = run();
      expect(argv.slice(0, SERVICE_PREFIX.length)).toEqual(SERVICE_PREFIX);
      const inputs = argv.flatMap((word, index) => (word === "-i" ? [[argv[index - 2], argv[index - 1], argv[index + 1]]] : []));
      expect(inputs).toEqual(inputPaths.map((path) => ["-protocol_whitelist", "file", path]));
    });

    it("writes every output in the output folder, last output last", () => {
      const { argv } = run();
      for (const name of outputs) expect(argv).toContain(`/job/out/${name}`);
      expect(argv.at(-1)).toBe(`/job/out/${outputs.at(-1)}`);
    });

    it("leaves no URL for ffmpeg to open", () => {
      const { argv } = run();
      expect(argv.join(" ")).not.toMatch(/https?:/i);
    });
  });
});
