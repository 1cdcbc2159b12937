-- Accounts, API keys and stored files. Tasks come in 0002.
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  email TEXT,
  created_at TEXT NOT NULL
);

-- Only a SHA-256 of each key is kept; `prefix` lets an operator tell keys apart.
CREATE TABLE api_keys (
  hash TEXT PRIMARY KEY,
  prefix TEXT NOT NULL UNIQUE,
  user_id TEXT NOT NULL REFERENCES users(id),
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE INDEX api_keys_user ON api_keys(user_id);

-- One row per object in R2 that the service owns: uploads and task outputs.
CREATE TABLE files (
  key TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  kind TEXT NOT NULL CHECK (kind IN ('upload', 'output')),
  task_id TEXT,
  size INTEGER NOT NULL,
  md5 TEXT,
  content_type TEXT NOT NULL,
  original_name TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX files_expires ON files(expires_at);
CREATE INDEX files_user ON files(user_id, created_at);
