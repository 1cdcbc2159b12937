import { API, ApiError, csrf } from "./api";
import type { Problem, UploadRecord } from "./types";

// Resumable upload (tus 1.0, docs/uploads.md) in chunks small enough for any Cloudflare plan's
// request-body limit; XHR rather than fetch because only XHR reports upload progress.
const CHUNK_BYTES = 16 * 1024 * 1024;

export async function tusUpload(file: File, onProgress: (sent: number) => void): Promise<UploadRecord> {
  const metadata = [`filename ${base64(file.name)}`];
  if (file.type) metadata.push(`filetype ${base64(file.type)}`);
  const created = await tusRequest("POST", `${API}/upload/tus`, { "Upload-Length": String(file.size), "Upload-Metadata": metadata.join(",") });
  const location = created.getResponseHeader("Location")!;
  let offset = 0;
  let last: XMLHttpRequest | null = null;
  while (offset < file.size) {
    const chunk = file.slice(offset, offset + CHUNK_BYTES);
    const start = offset;
    last = await tusRequest("PATCH", location, { "Upload-Offset": String(offset), "Content-Type": "application/offset+octet-stream" }, chunk, (sent) => onProgress(start + sent));
    offset = Number(last.getResponseHeader("Upload-Offset"));
    onProgress(offset);
  }
  return JSON.parse(last!.getResponseHeader("Upload-Record")!) as UploadRecord;
}

function tusRequest(method: string, url: string, headers: Record<string, string>, body: Blob | null = null, onProgress: ((sent: number) => void) | null = null): Promise<XMLHttpRequest> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(method, url);
    xhr.setRequestHeader("Tus-Resumable", "1.0.0");
    const token = csrf();
    if (token) xhr.setRequestHeader("x-csrf-token", token);
    for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value);
    if (onProgress) xhr.upload.onprogress = (event) => onProgress(event.loaded);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) resolve(xhr);
      else reject(new ApiError(xhr.status, problemOf(xhr.responseText)));
    };
    xhr.onerror = () => reject(new Error("The upload was interrupted by a network error."));
    xhr.send(body);
  });
}

/** A refusal's problem details; an answer that is not JSON (a proxy's page) still has its status. */
function problemOf(text: string): Problem {
  try {
    return JSON.parse(text) as Problem;
  } catch {
    return {};
  }
}

function base64(text: string): string {
  return btoa(String.fromCharCode(...new TextEncoder().encode(text)));
}
