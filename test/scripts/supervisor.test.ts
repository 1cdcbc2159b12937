import { execFileSync, spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { descendants, freePort } from "../../scripts/lib/local-stack";
import { Supervisor } from "../../scripts/lib/supervisor";
import { living } from "../helpers/processes";

// A real child process: an HTTP server on `port`, answering 200.
const SERVER = "require('node:http').createServer((q, r) => r.end('ok')).listen(Number(process.env.PORT), '127.0.0.1')";

/** The service itself: the only child of the watchdog that leads its process group. */
function servicePid(supervisor: Supervisor): number {
  return Number(execFileSync("ps", ["-o", "pid=", "--ppid", String(supervisor.pid)], { encoding: "utf8" }).trim());
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("Supervisor", () => {
  let supervisor: Supervisor | undefined;
  afterEach(async () => supervisor?.stop());

  async function supervised() {
    const port = await freePort();
    const lines: string[] = [];
    let up = false;
    supervisor = new Supervisor(
      {
        label: "demo", command: process.execPath, args: ["-e", SERVER], env: { ...process.env, PORT: String(port) }, cwd: process.cwd(),
        healthy: async () => (up = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(500) }).then((r) => r.ok, () => false)),
      },
      { checkEveryMs: 100, maxFailedChecks: 3, backoffMs: 100, stopGraceMs: 500, log: (line) => lines.push(line) },
    );
    supervisor.start();
    await until(() => up);
    return { lines, supervisor, isUp: () => up };
  }

  it("starts a service that crashed again and says so", async () => {
    const { lines, supervisor, isUp } = await supervised();
    const first = supervisor.pid!;
    process.kill(servicePid(supervisor), "SIGKILL");
    await until(() => supervisor.restartCount === 1 && supervisor.pid !== undefined && supervisor.pid !== first && isUp() && lines.some((line) => line.includes("is back")));
    expect(lines[0]).toMatch(/^\[start\] demo exited \(SIGKILL\); restarting it in 0\.1 s \(restart 1\)\.$/);
  });

  it("restarts a service that is still there but stopped answering", async () => {
    const { lines, supervisor } = await supervised();
    const first = supervisor.pid!;
    process.kill(servicePid(supervisor), "SIGSTOP");
    await until(() => supervisor.restartCount === 1 && supervisor.pid !== undefined && supervisor.pid !== first);
    expect(lines[0]).toContain("demo stopped answering");
    await until(() => lines.some((line) => line.includes("is back")));
  });

  it("takes its service and the service's own children down when the supervisor itself is SIGKILLed", async () => {
    // A supervisor in a process of its own, running a service that starts a child as wrangler starts workerd.
    const script = `
      const { Supervisor } = await import(${JSON.stringify(new URL("../../scripts/lib/supervisor.ts", import.meta.url).pathname)});
      new Supervisor({ label: "demo", command: "sh", args: ["-c", "sleep 300 & sleep 300"], env: process.env, cwd: "/", healthy: async () => true }).start();`;
    const outer = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { stdio: "ignore" });
    try {
      let below: number[] = [];
      await until(async () => (below = await descendants(outer.pid!)).length >= 4); // watchdog, sh, two sleeps
      process.kill(outer.pid!, "SIGKILL");
      await until(async () => (await living(below)).length === 0, 10_000);
    } finally {
      outer.kill("SIGKILL");
    }
  });

  it("leaves nothing running once stopped", async () => {
    const { supervisor } = await supervised();
    const pids = [supervisor.pid!, servicePid(supervisor)];
    await supervisor.stop();
    await until(async () => (await living(pids)).length === 0, 5_000);
  });
});
