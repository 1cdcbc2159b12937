import { FFedgeError } from "./errors.js";

/**
 * Local files, for Node, Deno and Bun only. node: modules are imported when a path is first
 * used, never at load, so the SDK's core still loads in browsers and Workers.
 */
interface NodeFs {
  stat(path: string): Promise<{ isFile(): boolean; size: number }>;
  access(path: string, mode?: number): Promise<void>;
  openAsBlob(path: string, options?: { type?: string }): Promise<Blob>;
  basename(path: string): string;
  join(...parts: string[]): string;
  resolve(...parts: string[]): string;
  writeStream(path: string, stream: ReadableStream<Uint8Array>, overwrite: boolean): Promise<number>;
}

let nodeFs: Promise<NodeFs> | undefined;

async function loadNodeFs(): Promise<NodeFs> {
  const specifier = (name: string) => `node:${name}`;
  try {
    const [fs, fsp, path, stream, streamPromises] = await Promise.all([
      import(/* @vite-ignore */ specifier("fs")),
      import(/* @vite-ignore */ specifier("fs/promises")),
      import(/* @vite-ignore */ specifier("path")),
      import(/* @vite-ignore */ specifier("stream")),
      import(/* @vite-ignore */ specifier("stream/promises")),
    ]);
    return {
      stat: fsp.stat,
      access: (target, mode) => fsp.access(target, mode ?? fs.constants.R_OK),
      openAsBlob: fs.openAsBlob,
      basename: path.basename,
      join: path.join,
      resolve: path.resolve,
      // Written beside the target and renamed at the end, so an interrupted download never leaves a truncated file under the real name.
      async writeStream(target, body, overwrite) {
        if (!overwrite && (await fsp.stat(target).then(() => true, () => false))) throw Object.assign(new Error(`${target} exists`), { code: "EEXIST" });
        const partial = `${target}.part`;
        const out = fs.createWriteStream(partial);
        try {
          await streamPromises.pipeline(stream.Readable.fromWeb(body), out);
          await fsp.rename(partial, target);
        } catch (error) {
          await fsp.rm(partial, { force: true });
          throw error;
        }
        return out.bytesWritten as number;
      },
    };
  } catch (error) {
    throw FFedgeError.local("NOT_SUPPORTED", "Local files are not available", "This runtime has no file system: pass a Blob or File instead of a path.", error);
  }
}

export function node(): Promise<NodeFs> {
  nodeFs ??= loadNodeFs();
  return nodeFs;
}

/** A local file as a Blob read lazily from disk, with clear errors for a missing or unreadable one. */
export async function openFile(path: string, type?: string): Promise<{ blob: Blob; name: string }> {
  const fs = await node();
  let stat: { isFile(): boolean; size: number };
  try {
    stat = await fs.stat(path);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw FFedgeError.local("FILE_NOT_FOUND", "File not found", `There is no file ${JSON.stringify(path)}.`, error);
    throw FFedgeError.local("FILE_UNREADABLE", "File unreadable", `${JSON.stringify(path)} cannot be read: ${(error as Error).message}.`, error);
  }
  if (!stat.isFile()) throw FFedgeError.local("FILE_UNREADABLE", "Not a file", `${JSON.stringify(path)} is not a regular file.`);
  try {
    await fs.access(path);
    return { blob: await fs.openAsBlob(path, type ? { type } : {}), name: fs.basename(path) };
  } catch (error) {
    throw FFedgeError.local("FILE_UNREADABLE", "File unreadable", `${JSON.stringify(path)} cannot be read: ${(error as Error).message}.`, error);
  }
}

/** Whether a word names an existing local file (a missing one is left to the caller to report). */
export async function isLocalFile(path: string): Promise<boolean> {
  const fs = await node();
  return fs.stat(path).then((stat) => stat.isFile(), () => false);
}
