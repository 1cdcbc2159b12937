-- Resumable (tus 1.0) uploads in progress. Bytes live in an R2 multipart upload (full parts)
-- plus one small object `tus/<id>/tail` (the remainder below a part); this row says how much
-- of that is committed. See edge/files/tus/.
CREATE TABLE tus_uploads (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  state TEXT NOT NULL CHECK (state IN ('uploading', 'completed', 'terminated')),
  upload_length INTEGER NOT NULL,
  -- Bytes durably stored: part_size * parts + tail_size.
  upload_offset INTEGER NOT NULL DEFAULT 0,
  -- Upload-Metadata exactly as sent (HEAD repeats it), and what it said.
  metadata TEXT,
  declared_type TEXT,
  original_name TEXT,
  -- Fixed per upload: R2 needs every part but the last to have the same size.
  part_size INTEGER NOT NULL,
  -- JSON [{"partNumber": n, "etag": "..."}] of the parts uploaded so far.
  parts TEXT NOT NULL DEFAULT '[]',
  tail_size INTEGER NOT NULL DEFAULT 0,
  -- spark-md5 state after upload_offset bytes, so the MD5 covers the whole file across requests.
  md5_state TEXT,
  -- Decided from the first bytes: the stored type, the final key and the R2 multipart upload.
  content_type TEXT,
  download_only INTEGER NOT NULL DEFAULT 0,
  file_key TEXT,
  multipart_id TEXT,
  -- The PATCH holding the upload, and until when (renewed while it streams).
  lock_token TEXT,
  lock_expires_at INTEGER,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX tus_uploads_expires ON tus_uploads(expires_at);
CREATE INDEX tus_uploads_idle ON tus_uploads(state, updated_at);
