-- R2 multipart uploads a single request has started (streamed uploads of unknown length) and
-- not yet completed or aborted. A request that dies with its runtime leaves its row, and the
-- cron sweep aborts the upload, which frees its parts. The Workers R2 binding cannot list a
-- bucket's open multipart uploads, so they are recorded here. tus uploads keep theirs in
-- tus_uploads. See edge/files/open-multiparts.ts.
CREATE TABLE open_multipart_uploads (
  upload_id TEXT PRIMARY KEY,
  object_key TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX open_multipart_uploads_created_at ON open_multipart_uploads (created_at);
