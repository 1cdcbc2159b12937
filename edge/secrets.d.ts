// Secrets are not in wrangler.toml, so `wrangler types` cannot see them. Locally they live
// in .dev.vars (written by `npm start`); in production `wrangler secret put NAME`.
// Both the global `Env` and `Cloudflare.Env` (what `cloudflare:workers` and `cloudflare:test`
// export) carry them: `wrangler types` does not always derive one from the other.
interface FfedgeSecrets {
  /** HMAC key for signed upload URLs and per-task callback tokens. */
  SIGNING_SECRET: string;
  /** Shared secret the edge presents to transcoders on POST /jobs. */
  TRANSCODER_SECRET: string;
  /**
   * Development and tests only: comma-separated hosts (e.g. "127.0.0.1") that the guarded
   * fetcher may reach although they are private. Ignored when ENVIRONMENT is "production".
   */
  DEV_FETCH_ALLOW_HOSTS?: string;
  /** Optional R2 S3-API credentials; when set, /v1/uploads/sign returns presigned R2 URLs. */
  R2_ACCOUNT_ID?: string;
  R2_ACCESS_KEY_ID?: string;
  R2_SECRET_ACCESS_KEY?: string;
  R2_BUCKET_NAME?: string;
  /** Seconds a URL upload may wait on its origin for the next bytes (default 30); tests set it low. */
  URL_UPLOAD_IDLE_TIMEOUT_SECONDS?: string;
  /** Production: the id of the D1 database bound as DB, which the Worker cannot read from its binding (checked by edge/lib/config.ts). */
  D1_DATABASE_ID?: string;
  /**
   * Production only, and only after reading docs/security.md: isolation layers (out of
   * network_namespace, unprivileged_uid, job_root) a container may start without, passed to the
   * transcoder as SANDBOX_ALLOW_MISSING. Unset, a container lacking any of them refuses to start.
   */
  CONTAINER_SANDBOX_ALLOW_MISSING?: string;
  /** The log level of the transcoders in Containers (LOG_LEVEL there); `npm run bench -- tasks --containers` sets "debug". */
  TRANSCODER_LOG_LEVEL?: string;
  /** The S3 API endpoint, when not `https://<R2_ACCOUNT_ID>.r2.cloudflarestorage.com` (a jurisdiction endpoint; a local S3 server in tests). */
  R2_S3_ENDPOINT?: string;
}

declare namespace Cloudflare {
  interface Env extends FfedgeSecrets {}
}
interface Env extends FfedgeSecrets {}

// Code names the global `Env`, the test pool and Container stubs `Cloudflare.Env`: one type for both.
interface Env extends Cloudflare.Env {}
