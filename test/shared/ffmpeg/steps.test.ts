/**
 * Chained steps (shared/ffmpeg/steps.ts) and the threat case "step references" (docs/security.md,
 * case 23.2): a step reads an earlier step's output only through `-i {{steps.K.outputs.<name>}}`,
 * never a later step's, a path, another task's file or a reference tucked inside a filter.
 */
import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { type StepSpec, buildArgv, checkSteps, stepReferenceOf } from "../../../shared/ffmpeg/index";
import { IN } from "./helpers";

const TRIM = `ffmpeg -i ${IN} -ss 0 -t 2 clip.mp4`;
const SCALE = "ffmpeg -i {{steps.0.outputs.clip.mp4}} -vf scale=160:-2 small.mp4";
const THUMB = "ffmpeg -i {{steps.1.outputs.small.mp4}} -frames:v 1 thumb.jpg";

function refusalOf(steps: StepSpec[]): { code: string; detail: string; token: unknown; step: unknown } {
  try {
    checkSteps(steps);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { code: error.code, detail: error.detail, token: error.extra.token, step: error.extra.step };
  }
  throw new Error(`expected the steps to be refused: ${JSON.stringify(steps)}`);
}

describe("checkSteps", () => {
  it("accepts trim → scale → thumbnail, each later input an earlier step's output, the last step always published", () => {
    const steps = checkSteps([{ command: TRIM, publish: false }, { command: SCALE }, { command: THUMB, publish: false }]);
    expect(steps.map((step) => [step.index, step.outputs, step.publish])).toEqual([[0, ["clip.mp4"], false], [1, ["small.mp4"], true], [2, ["thumb.jpg"], true]]);
    const input = steps[1]!.parsed.inputs[0]!.url;
    expect(stepReferenceOf(input)).toEqual({ step: 0, filename: "clip.mp4" });
    expect(stepReferenceOf(steps[0]!.parsed.inputs[0]!.url)).toBeUndefined();
    // The reference becomes a local file of the job like any downloaded input, read with the file protocol only.
    expect(buildArgv(steps[1]!.parsed, { inputPaths: ["/job/out/clip.mp4"], outputDir: "/job/out" })).toEqual(expect.arrayContaining(["-protocol_whitelist", "file", "-i", "/job/out/clip.mp4", "/job/out/small.mp4"]));
  });

  it("applies the whole policy to every step, naming the step in the detail and in `step`", () => {
    expect(refusalOf([{ command: TRIM }, { command: "ffmpeg -i {{steps.0.outputs.clip.mp4}} -i /etc/passwd out.mp4" }])).toMatchObject({ code: "INPUT_NOT_ALLOWED", step: 1, token: "/etc/passwd", detail: expect.stringMatching(/^step 1: /) });
    expect(refusalOf([{ command: "ffmpeg -i https://127.0.0.1/a.mp4 a.mp4" }, { command: SCALE }])).toMatchObject({ step: 0, detail: expect.stringMatching(/^step 0: /) });
  });

  it("refuses a reference to the same or a later step", () => {
    expect(refusalOf([{ command: TRIM }, { command: "ffmpeg -i {{steps.1.outputs.clip.mp4}} b.mp4" }])).toMatchObject({ code: "STEP_REFERENCE_INVALID", step: 1, token: "{{steps.1.outputs.clip.mp4}}" });
    expect(refusalOf([{ command: "ffmpeg -i {{steps.1.outputs.small.mp4}} a.mp4" }, { command: SCALE }])).toMatchObject({ code: "STEP_REFERENCE_INVALID", step: 0 });
  });

  it("refuses a reference to an output the step does not write, naming the outputs it does", () => {
    const refusal = refusalOf([{ command: TRIM }, { command: "ffmpeg -i {{steps.0.outputs.other.mp4}} b.mp4" }]);
    expect(refusal).toMatchObject({ code: "STEP_REFERENCE_INVALID", step: 1, token: "{{steps.0.outputs.other.mp4}}" });
    expect(refusal.detail).toContain("'clip.mp4'");
  });

  it("refuses a reference to a numbered-pattern output saying it is one, and lists only the single files it could read", () => {
    const first = `ffmpeg -i ${IN} -t 2 clip.mp4 -frames:v 3 frame_%03d.png`;
    const refusal = refusalOf([{ command: first }, { command: "ffmpeg -i {{steps.0.outputs.frame_%03d.png}} b.mp4" }]);
    expect(refusal).toMatchObject({ code: "STEP_REFERENCE_INVALID", step: 1 });
    expect(refusal.detail).toContain("'frame_%03d.png' is a numbered pattern");
    expect(refusal.detail).toContain("its single-file outputs are 'clip.mp4')");
    expect(refusal.detail).not.toContain("has no output file");
  });

  it.each([
    ["a path out of the job folder", "{{steps.0.outputs.../../etc/passwd}}"],
    ["a subfolder", "{{steps.0.outputs.sub/clip.mp4}}"],
    ["another task's file", "{{tasks.tsk_0123456789abcdef01234567.outputs.clip.mp4}}"],
    ["a made-up scope", "{{inputs.0}}"],
    ["a sequence pattern", "{{steps.0.outputs.frame_%03d.png}}"],
    ["the reserved name written directly", "ffedge-step:0/clip.mp4"],
    ["the reserved name inside a URL", "https://example.com/ffedge-step:0/clip.mp4"],
  ])("refuses %s as a step input", (_what, input) => {
    const first = `ffmpeg -i ${IN} -t 2 clip.mp4 -frames:v 3 frame_%03d.png`;
    expect(refusalOf([{ command: first }, { command: `ffmpeg -i '${input}' b.mp4` }])).toMatchObject({ step: 1, code: expect.stringMatching(/^(STEP_REFERENCE_INVALID|INPUT_NOT_ALLOWED)$/) });
  });

  it.each([
    ["inside a quoted filter argument", `ffmpeg -i ${IN} -vf "movie={{steps.0.outputs.clip.mp4}},scale=2:2" b.mp4`],
    ["as a subtitles source", `ffmpeg -i ${IN} -vf "subtitles='{{steps.0.outputs.clip.mp4}}'" b.mp4`],
    ["as an output name", `ffmpeg -i ${IN} {{steps.0.outputs.clip.mp4}}`],
    ["as an option value", `ffmpeg -i ${IN} -metadata title={{steps.0.outputs.clip.mp4}} b.mp4`],
    ["glued to a URL", `ffmpeg -i ${IN}?{{steps.0.outputs.clip.mp4}} b.mp4`],
  ])("refuses a reference %s", (_where, command) => {
    expect(refusalOf([{ command: TRIM }, { command }])).toMatchObject({ code: "STEP_REFERENCE_INVALID", step: 1 });
  });

  it("refuses an output name a previous step already writes", () => {
    expect(refusalOf([{ command: TRIM }, { command: `ffmpeg -i ${IN} -t 1 clip.mp4` }])).toMatchObject({ step: 1, code: "OUTPUT_NOT_ALLOWED", detail: expect.stringContaining("step 0") });
  });

  it("caps the outputs of all steps together at the task's output limit", () => {
    const limits = { maxOutputs: 2 };
    expect(() => checkSteps([{ command: `ffmpeg -i ${IN} -t 1 a.mp4` }, { command: "ffmpeg -i {{steps.0.outputs.a.mp4}} b.mp4" }], { limits })).not.toThrow();
    expect(() => checkSteps([{ command: `ffmpeg -i ${IN} -t 1 a.mp4 -t 1 c.mp4` }, { command: "ffmpeg -i {{steps.0.outputs.a.mp4}} b.mp4" }], { limits })).toThrow(expect.objectContaining({ code: "LIMIT_EXCEEDED" }));
  });
});
