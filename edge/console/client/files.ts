/** The user's files as the composer and the Files page show them. */
import { formatBytes } from "./format";
import type { StoredFile } from "./types";

/** The user's files, listed by the server into the page (there is no listing endpoint to call). */
export function pageFiles(): StoredFile[] {
  return JSON.parse(document.body.dataset.files || "[]") as StoredFile[];
}

export function fileName(file: Pick<StoredFile, "filename" | "key">): string {
  return file.filename || file.key.split("/").pop()!;
}

/** Files of the same name told apart: size, upload time and the end of their key. */
export function fileIdentity(file: StoredFile): string {
  const stem = file.key.split("/").pop()!.replace(/\.[^.]*$/, "");
  const uploaded = file.created_at ? new Date(file.created_at).toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" }) : null;
  return [formatBytes(file.size), uploaded && `uploaded ${uploaded}`, `…${stem.slice(-6)}`].filter(Boolean).join(" · ");
}

export type FileKind = "video" | "image" | "subtitles" | "other";

export function fileKind(file: StoredFile): FileKind {
  const type = (file.content_type || "").split(";")[0]!;
  const extension = fileName(file).split(".").pop()!.toLowerCase();
  if (/^(video|audio)\//.test(type)) return "video";
  if (/^image\//.test(type) && type !== "image/svg+xml") return "image";
  if (["srt", "vtt", "ass", "ssa"].includes(extension) || /subrip|vtt|ssa/.test(type)) return "subtitles";
  return "other";
}
