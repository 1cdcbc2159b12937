import { describe, expect, it } from "vitest";
import { useJobInputs } from "../helpers/job-world";
import { jobFor, postJob, startTranscoder } from "../helpers/transcoder";

/** What shutdown allows a report past the grace (jobs/manager.ts SHUTDOWN_REPORT_MS). */
const AFTER_GRACE_REPORT_MS = 10_000;

describe("JobManager.shutdown", () => {
  const inputs = useJobInputs();

  it("lets a job that finished during the drain retry its report for the rest of the grace, through an edge outage longer than the cut past it", async () => {
    // Terminal reports would otherwise be retried a minute: the grace is what bounds them here.
    const transcoder = await startTranscoder({}, { terminalGiveUpMs: 60_000 });
    try {
      const job = jobFor(inputs.edge, `ffmpeg -i ${inputs.media.url("/clip.mp4")} -c copy copied.mp4`);
      expect((await postJob(transcoder.app, job)).statusCode).toBe(202);
      await inputs.edge.waitForEvent(job.task_id, (event) => event.type === "started");
      inputs.edge.failNextEvents(Number.MAX_SAFE_INTEGER);

      const drained = transcoder.app.jobs.shutdown(30_000);
      await new Promise((resolve) => setTimeout(resolve, AFTER_GRACE_REPORT_MS + 2_000));
      expect(inputs.edge.events(job.task_id).map((event) => event.type)).toEqual(["started"]);
      inputs.edge.failNextEvents(0);
      await drained;

      expect(inputs.edge.events(job.task_id).at(-1)).toMatchObject({ type: "completed", outputs: [{ filename: "copied.mp4" }] });
      expect(inputs.edge.events(job.task_id).map((event) => event.type)).not.toContain("handed_back");
    } finally {
      await transcoder.close();
    }
  }, 60_000);
});
