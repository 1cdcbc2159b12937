import { execFile } from "node:child_process";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const SCRIPT = join(process.cwd(), "scripts/ensure-system.sh");

/** A PATH holding only the given system commands, so the script sees exactly what we choose. */
async function pathWith(dir: string, commands: string[]): Promise<string> {
  for (const command of commands) {
    const { stdout } = await run("bash", ["-c", `command -v ${command}`]);
    await symlink(stdout.trim(), join(dir, command));
  }
  return dir;
}

async function ensure(path: string, args: string[], asUser?: string) {
  const command = asUser ? ["setpriv", `--reuid=${asUser}`, "--regid=nogroup", "--clear-groups", "bash", SCRIPT, ...args] : ["bash", SCRIPT, ...args];
  return run(command[0]!, command.slice(1), { env: { PATH: path } }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

describe("scripts/ensure-system.sh", () => {
  let full: string;
  let bare: string;
  beforeAll(async () => {
    full = await pathWith(await mkdtemp(join(tmpdir(), "ffedge-path-")), ["bash", "ffmpeg", "ffprobe", "unshare", "setpriv", "prlimit", "id"]);
    bare = await pathWith(await mkdtemp(join(tmpdir(), "ffedge-path-")), ["bash", "unshare", "setpriv", "prlimit", "id"]);
  });
  afterAll(async () => {
    await rm(full, { recursive: true, force: true });
    await rm(bare, { recursive: true, force: true });
  });

  it("says nothing and succeeds when ffmpeg and the sandbox tools are there", async () => {
    const result = await ensure(full, ["--for", "start"]);
    expect(result).toMatchObject({ code: 0, stderr: "" });
  });

  it("names the exact command to run when ffmpeg is missing and it cannot install (not root)", async () => {
    const result = await ensure(bare, ["--for", "start"], "nobody");
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("missing ffmpeg");
    expect(result.stderr).toContain("sudo apt-get install -y ffmpeg");
  });

  it("never fails npm install (--soft), but still says what is missing", async () => {
    const result = await ensure(bare, ["--soft"], "nobody");
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("sudo apt-get install -y ffmpeg");
  });

  it("asks for Chromium only for the tests", async () => {
    const start = await ensure(full, ["--for", "start"], "nobody");
    expect(start.stderr).not.toContain("chromium");
  });
});
