import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { DEFAULT_LIMITS } from "../../../shared/ffmpeg/limits";
import { tokenize } from "../../../shared/ffmpeg/tokenize";

function refusal(command: string, limits = DEFAULT_LIMITS): { code: string; status: number; token: unknown } {
  try {
    tokenize(command, limits);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { code: error.code, status: error.status, token: error.extra.token };
  }
  throw new Error(`expected a refusal for ${JSON.stringify(command)}`);
}

describe("tokenize", () => {
  it("splits words like a POSIX shell and drops a leading ffmpeg", () => {
    expect(tokenize("ffmpeg -i https://h/a.mp4 out.mp4")).toEqual(["-i", "https://h/a.mp4", "out.mp4"]);
  });

  it("accepts a command without the program name", () => {
    expect(tokenize("-i https://h/a.mp4 out.mp4")).toEqual(["-i", "https://h/a.mp4", "out.mp4"]);
  });

  it.each([
    [`-metadata title="My Holiday" o.mp4`, ["-metadata", "title=My Holiday", "o.mp4"]],
    [`-metadata 'title=My Holiday' o.mp4`, ["-metadata", "title=My Holiday", "o.mp4"]],
    [`-metadata title=My\\ Holiday o.mp4`, ["-metadata", "title=My Holiday", "o.mp4"]],
    [`-metadata "title=say \\"hi\\"" o.mp4`, ["-metadata", 'title=say "hi"', "o.mp4"]],
    [`-metadata 'title=it'\\''s' o.mp4`, ["-metadata", "title=it's", "o.mp4"]],
    [`-vf "drawtext=text='a b'" o.mp4`, ["-vf", "drawtext=text='a b'", "o.mp4"]],
  ])("removes one level of shell quoting from %s", (command, words) => {
    expect(tokenize(command)).toEqual(words);
  });

  it("keeps shell operators that are quoted or escaped as literal text", () => {
    expect(tokenize(`-metadata "title=a;b|c&&d>e" -metadata 'comment=$HOME' x\\;y.mp4`)).toEqual([
      "-metadata", "title=a;b|c&&d>e", "-metadata", "comment=$HOME", "x;y.mp4",
    ]);
  });

  it("keeps glob characters and brackets literal, as ffmpeg users write them unquoted", () => {
    expect(tokenize("-filter_complex [0:v]scale=2:2[v] -map [v] -map 0:a? o_*.mp4")).toEqual([
      "-filter_complex", "[0:v]scale=2:2[v]", "-map", "[v]", "-map", "0:a?", "o_*.mp4",
    ]);
  });

  it("joins lines continued with a backslash, including Windows line ends", () => {
    expect(tokenize("ffmpeg -i https://h/a.mp4 \\\n  -c copy \\\r\n  o.mp4")).toEqual(["-i", "https://h/a.mp4", "-c", "copy", "o.mp4"]);
  });

  it.each([
    ["o.mp4; id", ";"],
    ["o.mp4 && id", "&&"],
    ["o.mp4 || id", "||"],
    ["o.mp4 | nc host 1", "|"],
    ["o.mp4 > /tmp/x", ">"],
    ["o.mp4 < /etc/passwd", "<"],
    ["o.mp4 2>&1", ">&"],
    ["o.mp4 & id", "&"],
    ["(o.mp4)", "("],
    ["o.mp4 #comment", "#comment"],
  ])("refuses the unquoted shell operator in %s", (tail, token) => {
    expect(refusal(`ffmpeg -i https://h/a.mp4 ${tail}`)).toMatchObject({ code: "COMMAND_SHELL_OPERATOR", status: 400, token });
  });

  it.each(["$(id).mp4", '"$(id).mp4"', "`id`.mp4", '"`id`.mp4"', "$HOME.mp4", '"${HOME}.mp4"', "$'\\x41'.mp4", "a$(id)b"])(
    "refuses the shell expansion %s instead of taking it literally, naming the word as written",
    (word) => {
      expect(refusal(`ffmpeg -i https://h/a.mp4 ${word} -c copy`)).toMatchObject({ code: "COMMAND_SHELL_OPERATOR", token: word });
    },
  );

  it("refuses a bare newline, which would start a second shell command", () => {
    expect(refusal("ffmpeg -i https://h/a.mp4 o.mp4\nid")).toMatchObject({ code: "COMMAND_SHELL_OPERATOR", token: "\n" });
  });

  it("keeps a quoted newline inside its word", () => {
    expect(tokenize("-metadata 'comment=a\nb' o.mp4")).toEqual(["-metadata", "comment=a\nb", "o.mp4"]);
  });

  it("refuses a NUL character", () => {
    expect(refusal("ffmpeg -i https://h/a.mp4 o\0.mp4")).toMatchObject({ code: "COMMAND_SHELL_OPERATOR", token: "\0" });
  });

  it("refuses an unclosed quote and points at it", () => {
    expect(refusal(`ffmpeg -i https://h/a.mp4 -metadata "title=x o.mp4`)).toMatchObject({ code: "COMMAND_UNBALANCED_QUOTES", token: `"title=x o.mp4` });
  });

  it("refuses a trailing backslash that escapes nothing", () => {
    expect(refusal("ffmpeg -i https://h/a.mp4 o.mp4 \\")).toMatchObject({ code: "COMMAND_UNBALANCED_QUOTES", token: "\\" });
  });

  it("answers 413 for a command over the length limit", () => {
    expect(refusal(`ffmpeg -i https://h/${"a".repeat(20_000)}.mp4 o.mp4`)).toMatchObject({ code: "COMMAND_TOO_LONG", status: 413 });
  });

  it("refuses too many words and names the first one over the limit", () => {
    const words = Array.from({ length: 20 }, (_, index) => `w${index}`).join(" ");
    expect(refusal(`-i ${words}`, { ...DEFAULT_LIMITS, maxTokens: 10 })).toMatchObject({ code: "LIMIT_EXCEEDED", token: "w9" });
  });

  it.each([
    ["sh -c 'ffmpeg -i x o.mp4'", "sh"],
    ["bash -c id", "bash"],
    ["ffprobe -i https://h/a.mp4", "ffprobe"],
    ["/usr/bin/ffmpeg -i https://h/a.mp4 o.mp4", "/usr/bin/ffmpeg"],
    ["./ffmpeg -i https://h/a.mp4 o.mp4", "./ffmpeg"],
    ["FFMPEG -i https://h/a.mp4 o.mp4", "FFMPEG"],
    ["ffmpeg.exe -i https://h/a.mp4 o.mp4", "ffmpeg.exe"],
    ["FFREPORT=file=/tmp/r.log ffmpeg -i https://h/a.mp4 o.mp4", "FFREPORT=file=/tmp/r.log"],
    ["env ffmpeg -i https://h/a.mp4 o.mp4", "env"],
    ["o.mp4 -i https://h/a.mp4", "o.mp4"],
  ])("refuses any program other than ffmpeg: %s", (command, token) => {
    expect(refusal(command)).toMatchObject({ code: "PROGRAM_NOT_ALLOWED", status: 400, token });
  });

  it.each(["", "   ", "ffmpeg", "  ffmpeg  "])("refuses an empty command %j", (command) => {
    expect(refusal(command)).toMatchObject({ code: "COMMAND_EMPTY" });
  });
});
