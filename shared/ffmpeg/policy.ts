import type { UrlPolicyOptions } from "../net/url-policy";
import { type CheckContext, newNotes, type PolicyNotes } from "./context";
import { checkInputUrl, checkOutputName, inputFileName } from "./files";
import type { PolicyLimits } from "./limits";
import { OPTIONS } from "./options";
import { hasControlCharacter, quote, refuse } from "./refusal";
import type { OptionUse, OutputSpec, ParsedCommand } from "./types";

/** Output options that stop an output, and so whatever endless source feeds it. */
const BOUNDING_OPTIONS = new Set(["t", "to", "frames", "vframes", "aframes", "shortest"]);

/**
 * The rules a parsed command must pass before anything is fetched or run. Applied at the edge
 * on submission and again by the transcoder before it spawns ffmpeg.
 */
export function enforcePolicy(parsed: ParsedCommand, limits: PolicyLimits, urlPolicy: UrlPolicyOptions = {}): ParsedCommand {
  checkCounts(parsed, limits);
  for (const input of parsed.inputs) checkInputUrl(input.url, urlPolicy);
  const notes = newNotes();
  const base = {
    limits,
    parsed,
    notes,
    inputUrls: parsed.inputs.map((input) => input.url),
    inputFormats: parsed.inputs.map((input) => input.options.findLast((use) => use.base === "f")?.value),
  };
  for (const use of parsed.globals) checkValue(use, { ...base, use, scope: "global" });
  for (const owner of parsed.inputs) for (const use of owner.options) checkValue(use, { ...base, use, scope: "input", owner });
  for (const owner of parsed.outputs) for (const use of owner.options) checkValue(use, { ...base, use, scope: "output", owner });
  checkExtraOutputs(notes, checkOutputNames(parsed));
  checkBounded(parsed.outputs, notes);
  return parsed;
}

function checkCounts(parsed: ParsedCommand, limits: PolicyLimits): void {
  const extraInput = parsed.inputs[limits.maxInputs];
  if (extraInput) throw refuse("LIMIT_EXCEEDED", extraInput.url, `The command has ${parsed.inputs.length} inputs; the limit is ${limits.maxInputs}.`);
  const extraOutput = parsed.outputs[limits.maxOutputs];
  if (extraOutput) throw refuse("LIMIT_EXCEEDED", extraOutput.filename, `The command has ${parsed.outputs.length} outputs; the limit is ${limits.maxOutputs}.`);
}

/** Output names: each a safe plain name, used once, and not the name of an input. Returns the names in use. */
function checkOutputNames(parsed: ParsedCommand): Set<string> {
  const inputNames = new Set(parsed.inputs.map((input) => inputFileName(input.url)));
  const names = new Set<string>();
  for (const { filename } of parsed.outputs) {
    checkOutputName(filename);
    if (inputNames.has(filename)) throw refuse("OUTPUT_NOT_ALLOWED", filename, `The output ${quote(filename)} has the same name as an input; name it differently.`);
    if (names.has(filename)) throw refuse("OUTPUT_NOT_ALLOWED", filename, `The output ${quote(filename)} is named twice.`);
    names.add(filename);
  }
  return names;
}

function checkValue(use: OptionUse, context: CheckContext): void {
  if (use.value === undefined) return;
  const rule = OPTIONS[use.base]!;
  if (rule.rewrite !== "filter-graph" && hasControlCharacter(use.value)) {
    throw refuse("OPTION_VALUE_NOT_ALLOWED", use.value, `The value of '-${use.name}' contains control characters.`);
  }
  rule[context.scope]!(use.value, context);
}

/** Segment, list and playlist names an option makes ffmpeg write must not collide with outputs or each other. */
function checkExtraOutputs(notes: PolicyNotes, names: Set<string>): void {
  for (const name of notes.extraOutputs) {
    if (names.has(name)) throw refuse("OUTPUT_NOT_ALLOWED", name, `The file name ${quote(name)} is used for two different files.`);
    names.add(name);
  }
}

/**
 * Looped images and sources without a duration never end by themselves; every output must
 * then be stopped by `-t`, `-to`, `-frames` or `-shortest`. This is a friendly early answer:
 * the transcoder's wall-clock limit is what actually bounds a task.
 */
function checkBounded(outputs: OutputSpec[], notes: PolicyNotes): void {
  const generator = notes.unbounded[0];
  if (generator === undefined) return;
  const unbounded = outputs.find((output) => !output.options.some((use) => BOUNDING_OPTIONS.has(use.base)));
  if (unbounded) {
    throw refuse("LIMIT_EXCEEDED", generator, `${quote(generator)} produces media without end, and the output ${quote(unbounded.filename)} has no '-t', '-to', '-frames' or '-shortest' to stop it.`);
  }
}
