import type { Command } from "commander";
import type { UploadRecord } from "../../../sdk/src/index";
import { connect, type GlobalOptions } from "../client";
import { resolveFromUser } from "../context";
import { withInterrupt } from "../interrupt";
import { formatBytes, note, printJson, printLine, printTable } from "../output";
import { ProgressReporter, progressMode } from "../progress";
import { integer } from "./tasks";

export function registerFiles(program: Command): void {
  const files = program.command("files").description("upload, list and delete your stored files (they expire after a day)");
  const global = () => program.opts<GlobalOptions>();

  files
    .command("upload")
    .argument("<path...>", "local files")
    .description("upload local files (multipart when small, tus or a presigned PUT when large) and print their URLs")
    .option("--json", "print the upload records as JSON (an array)")
    .action(async (paths: string[], options: { json?: boolean }) => {
      const { ff } = await connect(global());
      const reporter = new ProgressReporter(progressMode(options));
      const records: UploadRecord[] = [];
      await withInterrupt(
        reporter,
        async (signal) => {
          for (const path of paths) {
            const record = await ff.files.upload(resolveFromUser(path), { signal, onProgress: (progress) => reporter.onProgress({ phase: "upload", file: path, ...progress }) });
            records.push(record);
            reporter.stop();
            if (!options.json) printLine(record.url);
          }
        },
        () => `ffedge: Interrupted: ${records.length} of ${paths.length} files uploaded`,
      );
      if (options.json) printJson(records);
    });

  files
    .command("list")
    .description("your unexpired uploads and task outputs, newest first")
    .option("--limit <n>", "how many (1-100)", integer(1, 100), 20)
    .option("--offset <n>", "skip this many", integer(0, 1_000_000_000))
    .option("--json", "print {total, files} as JSON")
    .action(async (options: { limit: number; offset?: number; json?: boolean }) => {
      const { ff } = await connect(global());
      const page = await ff.files.list({ limit: options.limit, offset: options.offset });
      if (options.json) return printJson(page);
      if (page.files.length === 0) return note("No files.");
      printTable(
        ["KEY", "SIZE", "EXPIRES", "NAME"],
        page.files.map((file) => [file.key, formatBytes(file.size), file.expires_at.replace("T", " ").slice(0, 19), file.filename ?? ""]),
      );
      if (page.total > page.files.length + (options.offset ?? 0)) note(`${page.files.length} of ${page.total}; --offset ${(options.offset ?? 0) + page.files.length} for more`);
    });

  files
    .command("rm")
    .argument("<key-or-url...>", "a file's key (uploads/usr_…/….mp4) or its URL")
    .description("delete stored files before they expire")
    .action(async (targets: string[]) => {
      const { ff } = await connect(global());
      for (const target of targets) {
        const key = fileKey(target);
        await ff.files.delete(key);
        note(`Deleted ${key}.`);
      }
    });
}

/** A file's URL is `<base>/<key>`: the key is its path without the leading slash. */
function fileKey(target: string): string {
  if (!/^https?:\/\//.test(target)) return target.replace(/^\/+/, "");
  return decodeURIComponent(new URL(target).pathname.replace(/^\/+/, ""));
}
