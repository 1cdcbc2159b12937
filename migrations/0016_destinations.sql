-- A user's own S3-compatible buckets that task outputs are delivered to (edge/destinations/repository.ts).
-- `credentials` is the access key pair sealed with AES-GCM (edge/lib/sealed-box.ts); only its fingerprint is ever shown.
CREATE TABLE destinations (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  endpoint TEXT,
  region TEXT NOT NULL,
  bucket TEXT NOT NULL,
  prefix TEXT NOT NULL DEFAULT '',
  path_style INTEGER NOT NULL,
  credentials TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX destinations_user_name ON destinations (user_id, name);
