/**
 * Keeps the policy's tables honest against the pinned ffmpeg (Debian's 5.1, the one the
 * transcoder image installs): every allowed option, format, codec and filter exists, options
 * take a value exactly when ffmpeg thinks they do, filters' positional orders are ffmpeg's,
 * no allowed filter has an unreviewed option that opens files, and filter arguments are split
 * the way ffmpeg splits them. Skipped where that ffmpeg is not installed.
 */
import { execFile, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { parseFilterArguments, parseFilterGraph, serializeFilterGraph } from "../../../shared/ffmpeg/filter-graph";
import { FILTER_RULES } from "../../../shared/ffmpeg/filter-catalogue";
import { BITSTREAM_FILTERS, DECODERS, DEMUXERS, ENCODERS, MUXERS } from "../../../shared/ffmpeg/formats";
import { OPTIONS } from "../../../shared/ffmpeg/options";

const FFMPEG = "/usr/bin/ffmpeg";

function ffmpeg(...args: string[]): string {
  const result = spawnSync(FFMPEG, ["-hide_banner", ...args], { encoding: "utf8" });
  return result.stdout + result.stderr;
}

/** Names in the second column of `ffmpeg -muxers` / `-encoders`... (`mov,mp4,m4a` counts as each name). */
function listed(flag: string): Set<string> {
  const names = new Set<string>();
  for (const line of ffmpeg(flag).split("\n")) {
    const match = /^\s*[A-Z.]{1,6}\s+(\S+)\s/.exec(line);
    for (const name of match?.[1]?.split(",") ?? []) names.add(name);
  }
  return names;
}

interface HelpOption {
  name: string;
  /** ffmpeg's option type: int, string, image_size, video_rate... */
  type: string;
  description: string;
  /** The largest value ffmpeg itself accepts, where it says. */
  max?: number;
}

const OPTION_LINE = /^ {3}([A-Za-z0-9_-]+)\s+<([a-z_0-9]+)>\s+\S+\s*(.*)$/gm;
const C_LIMITS: Readonly<Record<string, number>> = { INT_MAX: 2 ** 31 - 1, I64_MAX: 2 ** 63, UINT32_MAX: 2 ** 32 - 1, DBL_MAX: Number.MAX_VALUE, FLT_MAX: 3.4e38 };

function helpOptions(text: string): HelpOption[] {
  return [...text.matchAll(OPTION_LINE)].map((match) => {
    const max = /\(from \S+ to (\S+)\)/.exec(match[3]!)?.[1];
    return { name: match[1]!, type: match[2]!, description: match[3]!.replace(/\s*\((from|default) .*$/, ""), ...(max === undefined ? {} : { max: C_LIMITS[max] ?? Number(max) }) };
  });
}

/**
 * Every filter's options, in declaration order. `-h full` lists them by class name, which is
 * the filter's name or a shared one (`smpte(hd)bars`, `nullsrc/yuvtestsrc`, `(a)split`); filters
 * it does not name that way are asked for one by one with `-h filter=NAME`.
 */
async function allFilterOptions(names: string[]): Promise<Map<string, HelpOption[]>> {
  const sections = new Map<string, HelpOption[]>();
  for (const match of ffmpeg("-h", "full").matchAll(/^(\S+) AVOptions:\n((?: {3}\S.*\n| {5}.*\n)*)/gm)) {
    for (const part of match[1]!.split("/")) {
      for (const name of [part.replace(/\([^)]*\)/g, ""), part.replace(/[()]/g, "")]) if (!sections.has(name)) sections.set(name, helpOptions(match[2]!));
    }
  }
  const result = new Map<string, HelpOption[]>();
  await Promise.all(
    names.map(async (name) => {
      const known = sections.get(name);
      const help = known ? undefined : (await promisify(execFile)(FFMPEG, ["-hide_banner", "-h", `filter=${name}`], { encoding: "utf8" })).stdout;
      result.set(name, known ?? helpOptions(help!));
    }),
  );
  return result;
}

/** The shorthand order: aliases (listed next to the option with the same description) share a position. */
function shorthandOrder(options: HelpOption[]): string[] {
  return options.filter((option, index) => index === 0 || options[index - 1]!.description !== option.description).map((option) => option.name);
}

/**
 * Options that set a frame size, a rate or a count: by ffmpeg's type, or by their description
 * where ffmpeg's own range is wider than a small bound.
 */
function setsSizeRateOrCount(option: HelpOption): boolean {
  if (option.type === "image_size" || option.type === "video_rate") return true;
  if (!/^(int|int64|string|rational|double|float)$/.test(option.type)) return false;
  if (/\brates?\b/i.test(option.description)) return true;
  return SIZE_OR_COUNT.test(option.description) && !(option.max !== undefined && option.max <= 100_000);
}
const SIZE_OR_COUNT = /\b(size|width|height|number of|how many|samples|frames|inputs|outputs|aspect)\b/i;

/** Each option with the name its aliases share (the first of those listed together). */
function aliasGroups(options: HelpOption[]): Map<string, string> {
  const groups = new Map<string, string>();
  let head = "";
  options.forEach((option, index) => {
    if (index === 0 || options[index - 1]!.description !== option.description) head = option.name;
    groups.set(option.name, head);
  });
  return groups;
}

/** Options whose name or description suggests a file, reviewed as harmless. */
const REVIEWED_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  transpose: ["dir"],
  deband: ["direction"],
  drawtext: ["fontcolor", "fontcolor_expr", "fontsize", "font", "reload"],
  loudnorm: ["measured_I", "measured_i", "measured_LRA", "measured_lra", "measured_TP", "measured_tp", "measured_thresh"],
};
const FILE_LIKE_NAME = /file|path|dir|model|plugin|socket|address|script|font|dump|plot|url/i;
const FILE_LIKE_DESCRIPTION = /\b(file|filename|path|directory|model|url)\b/i;

describe.skipIf(!existsSync(FFMPEG))("the policy against the pinned ffmpeg", () => {
  it("knows exactly which allowed options take a value", () => {
    const args = ["-loglevel", "debug"];
    for (const name of Object.keys(OPTIONS)) args.push(`-${name}`, "VALUE");
    const log = ffmpeg(...args).replace(/Routing option \S+ to both codec and muxer layer\n/g, "");
    const takesValue = new Map<string, boolean>();
    for (const match of log.matchAll(/^Reading option '-([^']+)' \.\.\. matched as (?:AVOption|option) '[^']*'.*? with argument '?([^'\n]*?)'?\.$/gm)) {
      takesValue.set(match[1]!, match[2] === "VALUE");
    }
    const expected = Object.fromEntries(Object.entries(OPTIONS).map(([name, rule]) => [name, rule.takesValue]));
    expect(Object.fromEntries(Object.keys(OPTIONS).map((name) => [name, takesValue.get(name)]))).toEqual(expected);
  });

  it.each([
    ["-muxers", MUXERS],
    ["-demuxers", DEMUXERS],
    ["-encoders", ENCODERS],
    ["-decoders", DECODERS],
  ])("has every allowed name in %s", (flag, allowed) => {
    const available = listed(flag);
    expect([...allowed].filter((name) => name !== "copy" && !available.has(name))).toEqual([]);
  });

  it("has every allowed bitstream filter", () => {
    const available = new Set(ffmpeg("-bsfs").split("\n").map((line) => line.trim()));
    expect([...BITSTREAM_FILTERS].filter((name) => !available.has(name))).toEqual([]);
  });

  describe("the filter allow-list", () => {
    let help = new Map<string, HelpOption[]>();
    beforeAll(async () => {
      help = await allFilterOptions(Object.keys(FILTER_RULES));
    });

    it("names only filters the pinned ffmpeg has", () => {
      const available = new Set(ffmpeg("-filters").split("\n").map((line) => line.trim().split(/\s+/)[1]));
      expect(Object.keys(FILTER_RULES).filter((name) => !available.has(name))).toEqual([]);
    });

    it.each(Object.entries(FILTER_RULES))("has no unreviewed option of %s that opens files, and ffmpeg's positional order", (name, rule) => {
      const options = help.get(name)!;
      const canonical = (option: string) => rule.aliases?.[option] ?? option;
      const handled = new Set([...Object.keys(rule.refused ?? {}), rule.inputFile, ...(REVIEWED_OPTIONS[name] ?? [])]);
      const unreviewed = options
        .filter((option) => FILE_LIKE_NAME.test(option.name) || FILE_LIKE_DESCRIPTION.test(option.description))
        .filter((option) => !handled.has(canonical(option.name)) && !handled.has(option.name));
      expect(unreviewed).toEqual([]);
      if (rule.order) expect(shorthandOrder(options).slice(0, rule.order.length)).toEqual(rule.order);
    });

    it.each(Object.entries(FILTER_RULES))("caps or reviews every option of %s that sets a size, rate or count, under each of its names", (name, rule) => {
      const options = help.get(name)!;
      const groups = aliasGroups(options);
      const classified = new Set([...Object.keys(rule.measures ?? {}), ...Object.keys(rule.uncapped ?? {})]);
      const unclassified = options.filter((option) => groups.get(option.name) === option.name && setsSizeRateOrCount(option) && !classified.has(option.name));
      expect(unclassified.map((option) => `${option.name} <${option.type}> ${option.description}`)).toEqual([]);
      expect([...classified].filter((option) => !groups.has(option))).toEqual([]);
      // Every spelling of a capped option must reach its cap.
      const capped = new Set(Object.keys(rule.measures ?? {}));
      const unresolved = options.filter((option) => capped.has(groups.get(option.name)!) && (rule.aliases?.[option.name] ?? option.name) !== groups.get(option.name));
      expect(unresolved.map((option) => option.name)).toEqual([]);
    });
  });

  describe("filter argument splitting", () => {
    const graphs = [
      "drawtext=text='a\\:b, c' :x= 5 \\ :y=' 7 '",
      "drawtext=text=it\\\\\\'s:x=1",
      "drawtext=text='[x]; y':fontsize=12",
      "drawtext=text=\\ lead\\ and\\ trail\\ ",
      "drawtext=text='unclosed, x",
      "drawtext=x=1:text=a\\\\:b",
    ];

    /** The option values ffmpeg reports setting on the drawtext filter. */
    function settings(graph: string): [string, string][] {
      const log = ffmpeg("-loglevel", "debug", "-f", "lavfi", "-i", "nullsrc=s=16x16:d=0.04", "-vf", graph, "-f", "null", "-");
      return [...log.matchAll(/^\[Parsed_drawtext_0 @ [^\]]+\] Setting '([^']*)' to value '([^\n]*)'$/gm)].map((match) => [match[1]!, match[2]!]);
    }

    it.each(graphs)("reads %j as ffmpeg does, before and after re-writing", (graph) => {
      const node = parseFilterGraph(graph).chains[0]![0]!;
      const ours = parseFilterArguments(node.args ?? "").map((argument): [string, string] => [argument.key ?? "?", argument.value]);
      expect(ours).toEqual(settings(graph));
      expect(settings(serializeFilterGraph(parseFilterGraph(graph)))).toEqual(ours);
    });
  });
});
