import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { type Caller, asTool, callJson, toolResult } from "./rest";
import { McpFileListSchema, McpUploadSchema } from "./schemas";

/** upload_from_url and list_files. */
export function registerFileTools(server: McpServer, caller: Caller): void {
  server.registerTool("upload_from_url", {
    title: "Store a file from a URL",
    description:
      "Downloads a file from a public http(s) URL into your storage and returns its `url`, to use as an ffmpeg input (-i) in run_ffmpeg. Useful when the original link is slow, short-lived or needs to be read by several tasks. Private and loopback hosts (localhost, 10.x, 192.168.x, 169.254.x ...) and other schemes are refused (URL_NOT_ALLOWED, URL_HOST_BLOCKED); the remote server must answer 2xx. Stored files expire after 24 hours. There is no way to send a file from your own disk through this tool: ask the user for a URL, or to upload it with the ffedge CLI or console.",
    inputSchema: { url: z.string().min(1).max(2048).describe("A public http(s) URL of the file, e.g. https://example.com/clip.mp4") },
    outputSchema: McpUploadSchema.shape,
    annotations: { openWorldHint: true },
  }, ({ url }) => asTool(async () => {
    const record = await callJson<z.infer<typeof McpUploadSchema>>(caller, "POST", "/api/upload/url", { url });
    const { url: storedUrl, key, size, content_type, expires_at } = record;
    return toolResult({ url: storedUrl, key, size, content_type, expires_at }, `Stored ${size} bytes (${content_type}) until ${expires_at}. Use this as an input: -i ${storedUrl}`);
  }));

  server.registerTool("list_files", {
    title: "List stored files",
    description: "Your unexpired uploads and task outputs, newest first. Each `url` can be used as an ffmpeg input (-i) in run_ffmpeg or downloaded; files expire 24 hours after they were stored.",
    inputSchema: {
      limit: z.number().int().min(1).max(100).default(20).describe("Files per page (1-100)"),
      offset: z.number().int().min(0).default(0).describe("Files to skip, for the next page"),
    },
    outputSchema: McpFileListSchema.shape,
    annotations: { readOnlyHint: true },
  }, ({ limit, offset }) => asTool(async () => {
    const page = await callJson<z.infer<typeof McpFileListSchema>>(caller, "GET", `/api/files?limit=${limit}&offset=${offset}`);
    const files = page.files.map(({ url, key, filename, size, content_type, created_at, expires_at }) => ({ url, key, filename, size, content_type, created_at, expires_at }));
    const lines = files.map((file) => `- ${file.filename ?? file.key}: ${file.url} (${file.size} bytes, expires ${file.expires_at})`);
    return toolResult({ total: page.total, files }, `${page.total} file(s); showing ${files.length} from offset ${offset}:\n${lines.join("\n")}`);
  }));
}
