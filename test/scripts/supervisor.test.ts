import { createServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { Supervisor } from "../../scripts/lib/supervisor";

// A real child process: an HTTP server on `port`, answering 200.
const SERVER = "require('node:http').createServer((q, r) => r.end('ok')).listen(Number(process.env.PORT), '127.0.0.1')";

async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function until(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
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
    process.kill(first, "SIGKILL");
    await until(() => supervisor.restartCount === 1 && supervisor.pid !== undefined && supervisor.pid !== first && isUp() && lines.some((line) => line.includes("is back")));
    expect(lines[0]).toMatch(/^\[start\] demo exited \(SIGKILL\); restarting it in 0\.1 s \(restart 1\)\.$/);
  });

  it("restarts a service that is still there but stopped answering", async () => {
    const { lines, supervisor } = await supervised();
    const first = supervisor.pid!;
    process.kill(first, "SIGSTOP");
    await until(() => supervisor.restartCount === 1 && supervisor.pid !== undefined && supervisor.pid !== first);
    expect(lines[0]).toContain("demo stopped answering");
    await until(() => lines.some((line) => line.includes("is back")));
  });

  it("leaves nothing running once stopped", async () => {
    const { supervisor } = await supervised();
    const pid = supervisor.pid!;
    await supervisor.stop();
    expect(() => process.kill(pid, 0)).toThrow();
  });
});
