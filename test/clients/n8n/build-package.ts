import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";

/** Builds the package's dist/ once: the tests load what would be published, as n8n would. */
export default async function buildPackage(): Promise<void> {
  await promisify(execFile)(process.execPath, [resolve(import.meta.dirname, "../../../clients/n8n-nodes-ffedge/build.mjs")]);
}
