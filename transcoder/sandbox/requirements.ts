import type { IsolationReport } from "./isolation";

export type IsolationLayer = keyof IsolationReport;

/** Every layer `/health` reports, in its order: the names SANDBOX_ALLOW_MISSING accepts. */
export const ISOLATION_LAYERS = ["network_namespace", "unprivileged_uid", "per_job_uid", "job_root", "rlimits"] as const satisfies readonly IsolationLayer[];

/**
 * The layers a transcoder in a Cloudflare Container (EGRESS=container, i.e. production) refuses
 * to start without, and what ffmpeg, which runs a stranger's command on a stranger's file, could
 * do in their absence. A layer's absence there is not something to learn later from `/health`:
 * Cloudflare's description of a Container instance
 * (https://developers.cloudflare.com/containers/platform-details/architecture/) says nothing of
 * user namespaces (which `unshare` needs as the non-root server) or of file capabilities
 * surviving the registry (which setpriv's drop to nobody needs), so the first sign of a missing
 * layer would otherwise be users' jobs running without it.
 *
 * Not required, because their absence exposes none of that:
 * - `per_job_uid` needs a root server (it chowns each job's folder to the job's uid); the image
 *   deliberately runs the server as the unprivileged `ffedge` (transcoder/Dockerfile), so it is
 *   never on there. Other jobs' files are kept out of reach by `job_root` instead, and each
 *   container runs one task (MAX_CONCURRENT_JOBS=1, edge/dispatch/transcoder-container.ts).
 * - `rlimits` bounds what a job may spend (memory, CPU time, file size): without it a job can
 *   exhaust only its own container, which holds only its own task and is cut by the task timeout.
 */
export const REQUIRED_IN_CONTAINER: Readonly<Partial<Record<IsolationLayer, string>>> = {
  // Without it ffmpeg's own protocols (tcp, udp, rtmp, http...) reach whatever the container
  // can: the transcoder's port on loopback and the outbound path, past the guarded fetcher.
  network_namespace: "ffmpeg could open network connections of its own",
  // Without it ffmpeg runs as the server's user and can read /proc/<server>/environ
  // (TRANSCODER_SECRET) and the server's memory, and rewrite the server's files.
  unprivileged_uid: "ffmpeg would run as the server's user and could read its environment, TRANSCODER_SECRET included, and its memory",
  // Without it every job's ffmpeg runs as the same nobody on the host's whole tree, where
  // other jobs' folders are readable to it (the non-root server has no per-job uid).
  job_root: "ffmpeg would see the whole file system, including other jobs' folders",
};

/** Required layers this host lacks that SANDBOX_ALLOW_MISSING does not name, in /health's order. */
export function missingRequiredLayers(report: IsolationReport, allowedMissing: readonly IsolationLayer[]): IsolationLayer[] {
  return ISOLATION_LAYERS.filter((layer) => layer in REQUIRED_IN_CONTAINER && !report[layer] && !allowedMissing.includes(layer));
}

/** Required layers that are missing but named in SANDBOX_ALLOW_MISSING: the operator's accepted risk, worth a warning. */
export function toleratedMissingLayers(report: IsolationReport, allowedMissing: readonly IsolationLayer[]): IsolationLayer[] {
  return ISOLATION_LAYERS.filter((layer) => layer in REQUIRED_IN_CONTAINER && !report[layer] && allowedMissing.includes(layer));
}

/** Why the transcoder will not start: one line naming each missing layer and the way out. */
export class IsolationMissingError extends Error {
  constructor(readonly missing: readonly IsolationLayer[]) {
    const reasons = missing.map((layer) => `${layer} (${REQUIRED_IN_CONTAINER[layer]})`).join("; ");
    super(
      `EGRESS=container requires every isolation layer that keeps ffmpeg from the server's secrets, other jobs' files and the network, and this host lacks: ${reasons}. ` +
        `Run it where these layers work, or accept the risk by naming them in SANDBOX_ALLOW_MISSING=${missing.join(",")}.`,
    );
    this.name = "IsolationMissingError";
  }
}
