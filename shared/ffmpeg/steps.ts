import { AppError } from "../errors";
import type { UrlPolicyOptions } from "../net/url-policy";
import { type PolicyLimits, resolveLimits } from "./limits";
import { parseArgv } from "./parse";
import { enforcePolicy } from "./policy";
import { quote, refuse } from "./refusal";
import { tokenize } from "./tokenize";
import type { ParsedCommand } from "./types";

/**
 * What a step reference becomes once checked: a reserved input name the transcoder maps to the
 * earlier step's file in the job's own folder. Only this module writes it (a command that
 * contains it is refused), so no user can name a local file directly.
 */
const STEP_INPUT_SCHEME = "ffedge-step:";
const REFERENCE = /^\{\{steps\.([0-9]{1,2})\.outputs\.([^{}\s]+)\}\}$/;

export interface StepSpec {
  command: string;
  /** Intermediate outputs are published unless false; the last step's always are. */
  publish?: boolean;
}

/** An earlier step's output a step reads as an input. */
interface StepReference {
  step: number;
  filename: string;
}

export interface CheckedStep {
  index: number;
  parsed: ParsedCommand;
  publish: boolean;
  /** The output names the step declares (single files only can be referred to). */
  outputs: string[];
}

/**
 * Judges a chain of steps as one task: each command passes the whole policy, where an input
 * may also be `{{steps.K.outputs.<name>}}` (standing alone after `-i`) naming a single-file
 * output of an earlier step K. No output name is used twice in the chain, and the outputs of
 * all steps together stay under the task's output cap. A refusal keeps the policy's code and
 * says which step (`step 1: …`, counted from 0 like the references), with `extra.step`.
 *
 * @example
 * checkSteps([
 *   { command: "ffmpeg -i https://example.com/a.mp4 -t 2 clip.mp4" },
 *   { command: "ffmpeg -i {{steps.0.outputs.clip.mp4}} -frames:v 1 thumb.jpg" },
 * ]);
 */
export function checkSteps(steps: readonly StepSpec[], options: UrlPolicyOptions & { limits?: Partial<PolicyLimits> } = {}): CheckedStep[] {
  const limits = resolveLimits(options.limits);
  const checked: CheckedStep[] = [];
  const owners = new Map<string, number>();
  let outputCount = 0;
  for (const [index, step] of steps.entries()) {
    const parsed = inStep(index, () => {
      const { argv, stepInputs } = resolveReferences(tokenize(step.command, limits), index, checked);
      return enforcePolicy(parseArgv(argv), limits, { allowHosts: options.allowHosts }, stepInputs);
    });
    const outputs = parsed.outputs.map((output) => output.filename);
    for (const name of outputs) {
      const owner = owners.get(name);
      if (owner !== undefined) throw stepRefused(index, refuse("OUTPUT_NOT_ALLOWED", name, `The output ${quote(name)} is already written by step ${owner}; every file of a task needs its own name.`));
      owners.set(name, index);
    }
    outputCount += outputs.length;
    if (outputCount > limits.maxOutputs) throw stepRefused(index, refuse("LIMIT_EXCEEDED", outputs.at(-1), `The steps write ${outputCount} outputs so far; the limit for a task is ${limits.maxOutputs}.`));
    checked.push({ index, parsed, publish: index === steps.length - 1 || step.publish !== false, outputs });
  }
  return checked;
}

/** The earlier step's output an input of a checked step names, if it names one. */
export function stepReferenceOf(url: string): StepReference | undefined {
  if (!url.startsWith(STEP_INPUT_SCHEME)) return undefined;
  const [step, filename] = url.slice(STEP_INPUT_SCHEME.length).split("/", 2);
  return { step: Number(step), filename: filename! };
}

/** Step references replaced by reserved input names; anything else that looks like one is refused. */
function resolveReferences(argv: readonly string[], index: number, earlier: readonly CheckedStep[]): { argv: string[]; stepInputs: Set<string> } {
  const stepInputs = new Set<string>();
  const resolved = argv.map((token, position) => {
    if (token.includes(STEP_INPUT_SCHEME)) throw refuse("STEP_REFERENCE_INVALID", token, `${quote(token)} uses a name the service reserves; name an earlier step's output as {{steps.K.outputs.<file name>}}.`);
    if (!token.includes("{{") && !token.includes("}}")) return token;
    const match = REFERENCE.exec(token);
    if (!match) throw refuse("STEP_REFERENCE_INVALID", token, `${quote(token)} is not a step reference; write one as a whole argument, {{steps.K.outputs.<file name>}}, right after '-i'.`);
    if (argv[position - 1] !== "-i") throw refuse("STEP_REFERENCE_INVALID", token, `${quote(token)} can only be an input: write '-i ${token}' (not inside a filter or another option).`);
    const step = Number(match[1]);
    const filename = match[2]!;
    if (step >= index) throw refuse("STEP_REFERENCE_INVALID", token, `${quote(token)} refers to step ${step}, which does not run before step ${index}; a step can only read the outputs of earlier steps.`);
    const source = earlier[step]!;
    const single = source.outputs.filter((output) => !output.includes("%"));
    const readable = single.length ? `its single-file outputs are ${single.map(quote).join(", ")}` : "it writes no single file";
    if (source.outputs.includes(filename) && filename.includes("%")) {
      throw refuse("STEP_REFERENCE_INVALID", token, `${quote(token)}: ${quote(filename)} is a numbered pattern, so step ${step} writes several files under it; a step reads only a single file of an earlier step (${readable}).`);
    }
    if (!source.outputs.includes(filename)) throw refuse("STEP_REFERENCE_INVALID", token, `${quote(token)}: step ${step} has no output file ${quote(filename)}; ${readable}.`);
    const name = `${STEP_INPUT_SCHEME}${step}/${filename}`;
    stepInputs.add(name);
    return name;
  });
  return { argv: resolved, stepInputs };
}

function inStep<T>(index: number, check: () => T): T {
  try {
    return check();
  } catch (error) {
    throw error instanceof AppError ? stepRefused(index, error) : error;
  }
}

function stepRefused(index: number, error: AppError): AppError {
  return new AppError(error.code, `step ${index}: ${error.detail}`, { ...error.extra, step: index });
}
