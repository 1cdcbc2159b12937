-- Idempotency-Key records: one per user and key, holding the first response for 24 h.
CREATE TABLE idempotency_keys (
  user_id TEXT NOT NULL REFERENCES users(id),
  key TEXT NOT NULL,
  -- SHA-256 of method, path and body; NULL while a streamed body is still being read.
  fingerprint TEXT,
  -- NULL while the first request runs; it holds the lease (renewed while it runs).
  status INTEGER,
  headers TEXT,
  body TEXT,
  lease_token TEXT,
  lease_expires_at INTEGER,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  PRIMARY KEY (user_id, key)
);
CREATE INDEX idempotency_keys_expires ON idempotency_keys(expires_at);
