import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { checkCommand } from "../../../shared/ffmpeg";
import { parseDictionary, parseFilterArguments, parseFilterGraph } from "../../../shared/ffmpeg/filter-graph";
import { tokenize } from "../../../shared/ffmpeg/tokenize";
import { findBuiltinPreset } from "../../../edge/presets/builtins";
import { checkPresetDefinition } from "../../../edge/presets/definition";
import { checkedPresetCommand, expandPreset } from "../../../edge/presets/expand";
import { plainNumber } from "../../../edge/presets/template";

const CLIP = "https://example.com/in.mp4";
const text = (sample: string) => ({ type: "string" as const, maxLength: 2048, examples: [sample] });
const preset = (command: string, sample = "hello") => ({
  name: "ctx",
  command,
  parameters: { type: "object" as const, properties: { input: text(CLIP), t: text(sample) }, required: ["input", "t"] },
});

/** The argv a value gives, or undefined when the value is refused with PRESET_PARAMS_INVALID naming `t`. */
function argvWith(command: string, t: string): string[] | undefined {
  try {
    return tokenize(expandPreset(preset(command), { input: CLIP, t }));
  } catch (error) {
    if (error instanceof AppError && error.code === "PRESET_PARAMS_INVALID" && error.extra.param === "t") return undefined;
    throw error;
  }
}

/** Strings rich in the characters every context gives meaning to. */
const values = fc.string({ unit: fc.constantFrom(..."ab1 :=,;[]'\"\\|%{}+/.-?#&@<>^`".split("")), maxLength: 24 });

describe("a value never adds options or syntax where it stands", () => {
  it("refuses the audit's drawtext value that added fontcolor and a box, naming the parameter and the preset", () => {
    const caption = preset("ffmpeg -i {{input}} -vf drawtext=text={{t}}:fontsize=24 out.mp4");
    const error = (() => {
      try {
        expandPreset(caption, { input: CLIP, t: "pwned:fontcolor=red:box=1:boxcolor=blue" });
      } catch (caught) {
        return caught as AppError;
      }
    })();
    expect(error).toMatchObject({ code: "PRESET_PARAMS_INVALID", extra: { param: "t", preset: "ctx" } });
    expect(error?.detail).toContain('":"');
    expect(error?.detail).toContain("drawtext=text={{t}}:fontsize=24");
  });

  it("in a filter argument: an accepted value leaves the graph's filters and option names as the template has them", () => {
    const command = "ffmpeg -i {{input}} -vf drawtext=text={{t}}:fontsize=24,scale=640:-2 out.mp4";
    const shape = (argv: string[]) => parseFilterGraph(argv[3]!).chains.map((chain) => chain.map((node) => [node.name, node.inputs, node.outputs, parseFilterArguments(node.args ?? "").map((arg) => arg.key)]));
    const expected = shape(argvWith(command, "hello")!);
    fc.assert(fc.property(values, (value) => {
      const argv = argvWith(command, value);
      if (argv !== undefined) expect(shape(argv)).toEqual(expected);
    }), { numRuns: 400 });
  });

  it("in a filter's first (positional) argument: an accepted value never names an option", () => {
    const command = "ffmpeg -i {{input}} -vf drawtext={{t}} out.mp4";
    fc.assert(fc.property(values, (value) => {
      const argv = argvWith(command, value);
      if (argv !== undefined) expect(parseFilterArguments(parseFilterGraph(argv[3]!).chains[0]![0]!.args!).every((arg) => arg.key === undefined)).toBe(true);
    }), { numRuns: 400 });
  });

  it("in an encoder's key=value list: an accepted value adds no key", () => {
    const command = "ffmpeg -i {{input}} -c:v libx264 -x264-params keyint={{t}}:min-keyint=1 out.mp4";
    fc.assert(fc.property(values, (value) => {
      const argv = argvWith(command, value);
      // undefined: ffmpeg would refuse the list (an empty value), which adds nothing either
      if (argv !== undefined) expect(parseDictionary(argv[5]!)?.map((entry) => entry.key) ?? "refused").toSatisfy((keys) => keys === "refused" || JSON.stringify(keys) === '["keyint","min-keyint"]');
    }), { numRuns: 400 });
  });

  it("in a metadata value after '=': any text stays the value of the template's key", () => {
    const command = "ffmpeg -i {{input}} -metadata title={{t}} out.mp4";
    fc.assert(fc.property(values, (value) => {
      expect(argvWith(command, value)?.[3]).toBe(`title=${value}`);
    }), { numRuns: 200 });
  });

  it("in an output file name: an accepted value chooses no directory, protocol or numbered sequence", () => {
    const command = "ffmpeg -i {{input}} out-{{t}}.mp4";
    fc.assert(fc.property(values, (value) => {
      const argv = argvWith(command, value);
      if (argv !== undefined) expect(argv[2]).toMatch(/^out-[A-Za-z0-9_.+-]*\.mp4$/);
    }), { numRuns: 400 });
  });

  it("in part of an input CLIP: an accepted value keeps the CLIP's scheme and host", () => {
    const command = "ffmpeg -i https://example.com/media/{{t}} out.mp4";
    fc.assert(fc.property(values, (value) => {
      const argv = argvWith(command, value);
      if (argv !== undefined) expect(new URL(argv[1]!).origin).toBe("https://example.com");
    }), { numRuns: 400 });
  });

  it("as a whole filtergraph: only a bare filter name is accepted", () => {
    expect(argvWith("ffmpeg -i {{input}} -vf {{t}} out.mp4", "hflip")?.[3]).toBe("hflip");
    expect(argvWith("ffmpeg -i {{input}} -vf {{t}} out.mp4", "scale=64:64")).toBeUndefined();
  });

  it("keeps subtitles-burn-in working: the filter takes one of the command's own input URLs whole", () => {
    const subtitles = findBuiltinPreset("subtitles-burn-in")!;
    const { command } = checkedPresetCommand(subtitles, { video: CLIP, subtitles: "https://example.com/a.srt?sig=1:2" }, {});
    expect(tokenize(command)).toContain("subtitles=https://example.com/a.srt?sig=1:2");
    const other = preset("ffmpeg -i {{input}} -vf subtitles={{t}} out.mp4");
    expect(() => expandPreset(other, { input: CLIP, t: "https://example.com/a.srt:force_style=x" })).toThrow(expect.objectContaining({ code: "PRESET_PARAMS_INVALID" }));
  });
});

describe("saving a preset whose sample carries the syntax of its place", () => {
  it.each([
    ["ffmpeg -i {{input}} -vf drawtext=text={{t}}:fontsize=24 out.mp4", "a:b"],
    ["ffmpeg -i {{input}} -c:v libx264 -x264-params {{t}} out.mp4", "keyint=60"],
    ["ffmpeg -i {{input}} {{t}}.mp4", "dir/out"],
  ])("refuses %s with the sample %j as PRESET_INVALID naming the parameter", (command, sample) => {
    expect(() => checkPresetDefinition(preset(command, sample), {})).toThrow(expect.objectContaining({ code: "PRESET_INVALID", extra: { param: "t" } }));
  });

  it("accepts the same places with plain samples", () => {
    expect(checkPresetDefinition(preset("ffmpeg -i {{input}} -vf drawtext=text={{t}}:fontsize=24 out-{{t}}.mp4", "hello"), {}).name).toBe("ctx");
  });
});

describe("numbers as text", () => {
  it.each([
    [0.000001, "0.000001"],
    [0.0000001, "0.0000001"],
    [0.00000015, "0.00000015"],
    [-2.5e-8, "-0.000000025"],
    [1e20, "100000000000000000000"],
    [1e21, "1000000000000000000000"],
    [1.5e21, "1500000000000000000000"],
    [123.456, "123.456"],
  ])("writes %d as %s, never with an exponent", (value, written) => {
    expect(plainNumber(value)).toBe(written);
    expect(Number(plainNumber(value))).toBe(value);
  });

  it("runs the thumbnail preset at 1e-7 seconds, which the policy refused as '1e-7'", () => {
    const { command } = checkedPresetCommand(findBuiltinPreset("thumbnail")!, { video: CLIP, at: 0.0000001 }, {});
    expect(tokenize(command).slice(0, 2)).toEqual(["-ss", "0.0000001"]);
  });
});

describe("policy refusals of an expanded preset", () => {
  it("name the parameter whose value made the refused token, and the preset", () => {
    const error = (() => {
      try {
        checkedPresetCommand(preset("ffmpeg -i {{input}} -metadata title={{t}} out.mp4"), { input: "http://169.254.169.254/latest/x.mp4", t: "x" }, {});
      } catch (caught) {
        return caught as AppError;
      }
    })();
    expect(error).toMatchObject({ code: "URL_HOST_BLOCKED", extra: { param: "input", preset: "ctx" } });
    expect(() => checkCommand("ffmpeg -i http://169.254.169.254/latest/x.mp4 out.mp4")).toThrow();
  });
});
