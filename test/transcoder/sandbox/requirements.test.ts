import { describe, expect, it } from "vitest";
import type { IsolationReport } from "../../../transcoder/sandbox/isolation";
import { IsolationMissingError, missingRequiredLayers, toleratedMissingLayers } from "../../../transcoder/sandbox/requirements";

const everyLayer: IsolationReport = { network_namespace: true, unprivileged_uid: true, per_job_uid: true, job_root: true, rlimits: true };
/** What `/health` reports in the image under Docker's default seccomp (no unshare, a non-root server). */
const dockerDefault: IsolationReport = { network_namespace: false, unprivileged_uid: true, per_job_uid: false, job_root: false, rlimits: true };

describe("the isolation a container transcoder requires", () => {
  it("needs nothing more where every layer works", () => {
    expect(missingRequiredLayers(everyLayer, [])).toEqual([]);
  });

  it("does not require a uid per job or resource limits, which keep no secret, file or network from ffmpeg", () => {
    expect(missingRequiredLayers({ ...everyLayer, per_job_uid: false, rlimits: false }, [])).toEqual([]);
  });

  it("requires the network namespace, the unprivileged uid and the job root, in /health's order", () => {
    const none: IsolationReport = { network_namespace: false, unprivileged_uid: false, per_job_uid: false, job_root: false, rlimits: false };
    expect(missingRequiredLayers(none, [])).toEqual(["network_namespace", "unprivileged_uid", "job_root"]);
  });

  it("lets the operator allow exactly the layers named, and only those", () => {
    expect(missingRequiredLayers(dockerDefault, ["network_namespace", "job_root"])).toEqual([]);
    expect(missingRequiredLayers(dockerDefault, ["network_namespace"])).toEqual(["job_root"]);
    expect(toleratedMissingLayers(dockerDefault, ["network_namespace", "job_root", "unprivileged_uid"])).toEqual(["network_namespace", "job_root"]);
  });

  it("says in one line which layers are missing, why each matters, and the exact override", () => {
    const message = new IsolationMissingError(["network_namespace", "job_root"]).message;
    expect(message).not.toContain("\n");
    expect(message).toContain("network_namespace (ffmpeg could open network connections of its own)");
    expect(message).toContain("job_root (ffmpeg would see the whole file system, including other jobs' folders)");
    expect(message).toContain("SANDBOX_ALLOW_MISSING=network_namespace,job_root.");
  });
});
