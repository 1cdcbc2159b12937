import { execFile } from "node:child_process";
import { chmod, copyFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { useReadableDir } from "../helpers/job-world";

const run = promisify(execFile);
const UNPRIVILEGED = "1000";

/**
 * In the container the server runs as `ffedge` and each job as nobody, so kill(2) on the job's
 * group answers EPERM: cancel and timeouts must signal it as nobody instead. Reproduced here
 * with a setpriv given the same two capabilities as the image's, run by an unprivileged user.
 */
describe("a job dropped to another uid by a non-root server", () => {
  const dir = useReadableDir("ffedge-kill-as-");
  let setpriv: string;
  beforeAll(async () => {
    setpriv = path.join(dir.path, "setpriv");
    await copyFile("/usr/bin/setpriv", setpriv);
    await chmod(setpriv, 0o755);
    await run("setcap", ["cap_setuid,cap_setgid+ep", setpriv]);
  });

  it("is still killed when aborted, through the sandbox's kill command", async () => {
    const child = path.join(process.cwd(), "test/transcoder/sandbox/fixtures/kill-as-child.ts");
    const { stdout } = await run("setpriv", [`--reuid=${UNPRIVILEGED}`, `--regid=${UNPRIVILEGED}`, "--clear-groups", process.execPath, "--import", "tsx", child, setpriv, "45"], {
      cwd: process.cwd(),
      env: { PATH: process.env.PATH, HOME: os.tmpdir() },
      timeout: 40_000,
    });
    expect(JSON.parse(stdout)).toEqual({ signal: "SIGKILL", killed: true });
  }, 50_000);
});
