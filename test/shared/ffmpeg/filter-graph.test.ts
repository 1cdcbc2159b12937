import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import {
  type FilterGraph,
  type FilterNode,
  parseFilterArguments,
  parseFilterGraph,
  serializeFilterArguments,
  serializeFilterGraph,
} from "../../../shared/ffmpeg/filter-graph";

function node(name: string, args?: string, inputs: string[] = [], outputs: string[] = [], instance = ""): FilterNode {
  return args === undefined ? { inputs, name, instance, outputs } : { inputs, name, instance, args, outputs };
}

function graphError(text: string): { code: string; token: unknown } {
  try {
    parseFilterGraph(text);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { code: error.code, token: error.extra.token };
  }
  throw new Error(`expected ${text} to be unreadable`);
}

describe("parseFilterGraph", () => {
  it("reads chains, filters, labels and arguments", () => {
    expect(parseFilterGraph("[0:v]scale=640:-2,fps=25[v];[0:a]anull[a]")).toEqual({
      chains: [
        [node("scale", "640:-2", ["0:v"]), node("fps", "25", [], ["v"])],
        [node("anull", undefined, ["0:a"], ["a"])],
      ],
    });
  });

  it("reads several labels, spaces and newlines between the parts", () => {
    expect(parseFilterGraph(" [0:v] [1:v]  overlay = 10:10 [out] ;\n [a]  null ")).toEqual({
      chains: [[node("overlay", "10:10", ["0:v", "1:v"], ["out"])], [node("null", undefined, ["a"])]],
    });
  });

  it("removes the graph level of quoting and escaping, keeping terminators inside quotes", () => {
    const graph = parseFilterGraph("drawtext=text='a, b; [c]':x=1,select=eq(n\\,0)");
    expect(graph.chains[0]).toEqual([node("drawtext", "text=a, b; [c]:x=1"), node("select", "eq(n,0)")]);
  });

  it("separates an @instance suffix from the filter name", () => {
    expect(parseFilterGraph("drawtext@title=text=hi").chains[0]![0]).toEqual(node("drawtext", "text=hi", [], [], "@title"));
  });

  it("reads a quoted filter name as the name ffmpeg would look up", () => {
    expect(parseFilterGraph("'movie'=x").chains[0]![0]!.name).toBe("movie");
  });

  it("keeps a leading sws_flags setting", () => {
    expect(parseFilterGraph("sws_flags=lanczos+accurate_rnd;scale=2:2")).toEqual({ swsFlags: "lanczos+accurate_rnd", chains: [[node("scale", "2:2")]] });
  });

  it.each([
    ["", "a missing filter name"],
    ["scale=2:2;", "a trailing separator"],
    ["[0:vscale", "an unclosed label"],
    ["[]scale", "an empty label"],
    ["scale [a] x", "text after the output labels"],
    ["Sc@le", "a name that is not a filter name"],
    ["sws_flags=bicubic", "sws_flags without ';'"],
    ["[a b]null", "a label with a space"],
  ])("refuses %j (%s)", (text) => {
    expect(graphError(text)).toMatchObject({ code: "FILTER_GRAPH_INVALID", token: text });
  });
});

describe("parseFilterArguments", () => {
  it.each([
    ["640:-2", [{ value: "640" }, { value: "-2" }]],
    ["w=640:h=-2", [{ key: "w", value: "640" }, { key: "h", value: "-2" }]],
    ["640:h=-2", [{ value: "640" }, { key: "h", value: "-2" }]],
    ["text=a\\:b:x=1", [{ key: "text", value: "a:b" }, { key: "x", value: "1" }]],
    ["text='a:b'", [{ key: "text", value: "a:b" }]],
    [" w = 2 : h=3", [{ key: "w", value: "2" }, { key: "h", value: "3" }]],
    ["/etc/passwd", [{ value: "/etc/passwd" }]],
    ["/textfile=/etc/passwd", [{ key: "/textfile", value: "/etc/passwd" }]],
    ["https://h/s.srt", [{ value: "https" }, { value: "//h/s.srt" }]],
    [":x", [{ value: "" }, { value: "x" }]],
    ["a:", [{ value: "a" }]],
    ["", []],
  ])("splits %j as ffmpeg's option parser does", (args, expected) => {
    expect(parseFilterArguments(args)).toEqual(expected);
  });
});

describe("serializeFilterGraph", () => {
  it("writes a graph ffmpeg reads back the same way", () => {
    const text = "[0:v]drawtext=text='5\\:00, ok; [really]':x=(w-tw)/2[v];[v]scale=w=640:h=-2";
    const graph = parseFilterGraph(text);
    expect(parseFilterGraph(serializeFilterGraph(graph))).toEqual(graph);
  });

  it("leaves plain graphs as they were written", () => {
    expect(serializeFilterGraph(parseFilterGraph("[0:v]scale=640:-2,fps=25[v];[0:a]anull[a]"))).toBe("[0:v]scale=640:-2,fps=25[v];[0:a]anull[a]");
  });

  it("round-trips any graph through serialization", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "b", " ", "\\", "'", ":", ",", ";", "[", "]", "=", "\n", "\t", "é"), maxLength: 16 });
    const label = fc.stringMatching(/^[A-Za-z0-9_:.#-]{1,8}$/);
    const filterNode = fc.record({
      inputs: fc.array(label, { maxLength: 2 }),
      name: fc.stringMatching(/^[a-z0-9_]{1,8}$/),
      instance: fc.constantFrom("", "@x1"),
      args: fc.option(text, { nil: undefined }),
      outputs: fc.array(label, { maxLength: 2 }),
    });
    const graph = fc.record({ chains: fc.array(fc.array(filterNode, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }) });
    fc.assert(
      fc.property(graph, (generated) => {
        const normal: FilterGraph = { chains: generated.chains.map((chain) => chain.map((filter) => withoutUndefinedArgs(filter))) };
        expect(parseFilterGraph(serializeFilterGraph(normal))).toEqual(normal);
      }),
    );
  });

  it("round-trips any argument list through serialization", () => {
    const value = fc.string({ unit: fc.constantFrom("a", "1", " ", "\\", "'", ":", "=", ",", "/", "\n"), maxLength: 12 });
    const argument = fc.record({ key: fc.stringMatching(/^[a-z_]{1,6}$/), value });
    fc.assert(
      fc.property(fc.array(argument, { minLength: 1, maxLength: 4 }), (args) => {
        expect(parseFilterArguments(serializeFilterArguments(args))).toEqual(args);
      }),
    );
  });
});

function withoutUndefinedArgs(filter: FilterNode): FilterNode {
  const { args, ...rest } = filter;
  return args === undefined ? rest : { ...rest, args };
}
