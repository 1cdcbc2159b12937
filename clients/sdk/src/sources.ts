import { localInputs, rewrite, words } from "./command.js";
import { FFedgeError } from "./errors.js";
import { isLocalFile, node } from "./local.js";
import type { TaskSource, UploadRecord } from "./types.js";

/** Uploads one local file (`input` as the caller wrote it, for progress); the same path is uploaded once per run. */
export type Uploader = (path: string, input: string) => Promise<UploadRecord>;

export interface Upload {
  input: string;
  path: string;
  record: UploadRecord;
}

const URL_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]+:/;
const RELATIVE_PATH = /^\.{1,2}[\\/]/;

/**
 * Each path uploaded once however often it appears, with the uploads listed in the order they
 * finished; `settled()` waits for the ones still under way (to clean up after a failure).
 */
export function uploadOnce(upload: Uploader): { upload: Uploader; uploads: Upload[]; settled: () => Promise<void> } {
  const started = new Map<string, Promise<UploadRecord>>();
  const uploads: Upload[] = [];
  return {
    uploads,
    settled: async () => {
      await Promise.allSettled(started.values());
    },
    upload: (path, input) => {
      let record = started.get(path);
      if (!record) {
        record = upload(path, input).then((done) => (uploads.push({ input, path, record: done }), done));
        started.set(path, record);
      }
      return record;
    },
  };
}

/** The command with its local `-i` inputs uploaded and replaced by their URLs, everything else as written. */
export async function commandWithUploads(command: string, cwd: string | undefined, upload: Uploader): Promise<string> {
  const argv = words(command);
  const inputs = argv ? await localInputs(argv, cwd) : [];
  const replacements = [];
  for (const input of inputs) replacements.push({ word: input.word, url: (await upload(input.path, input.word.value)).url });
  return rewrite(command, replacements);
}

/**
 * A preset parameter that names an existing local file is uploaded and replaced by its URL; one
 * written as a relative path (`./in.mp4`) must exist. Every other value is sent as given, for the
 * preset's schema to judge.
 */
async function paramWithUpload(value: unknown, cwd: string | undefined, upload: Uploader): Promise<unknown> {
  if (typeof value !== "string" || value === "" || value.length > 4096 || (URL_SCHEME.test(value) && !/^[A-Za-z]:[\\/]/.test(value))) return value;
  const fs = await node().catch(() => undefined);
  if (!fs) return value;
  const path = fs.resolve(cwd ?? ".", value);
  if (await isLocalFile(path)) return (await upload(path, value)).url;
  if (RELATIVE_PATH.test(value)) throw FFedgeError.local("FILE_NOT_FOUND", "File not found", `The parameter value ${JSON.stringify(value)} is not a file${cwd ? ` in ${cwd}` : ""}.`);
  return value;
}

/** The task's local files uploaded: a command's or each step's `-i` inputs, a preset's file parameters. */
export async function sourceWithUploads<T extends TaskSource>(source: T, cwd: string | undefined, upload: Uploader): Promise<T> {
  if ("steps" in source && source.steps) {
    const steps = [];
    for (const step of source.steps) steps.push({ ...step, command: await commandWithUploads(step.command, cwd, upload) });
    return { ...source, steps };
  }
  if ("preset" in source && source.preset) {
    const params: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(source.params ?? {})) params[name] = await paramWithUpload(value, cwd, upload);
    return { ...source, params };
  }
  if ("command" in source && typeof source.command === "string") return { ...source, command: await commandWithUploads(source.command, cwd, upload) };
  return source;
}
