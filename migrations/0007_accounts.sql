-- Accounts for the web console: passwords, verified addresses, sessions, mail tokens,
-- sign-in attempt limits, the development outbox, and names/last use of API keys.

-- scrypt hash ("scrypt$N$r$p$salt$hash"); NULL for users the key CLI created until they reset.
ALTER TABLE users ADD COLUMN password_hash TEXT;
ALTER TABLE users ADD COLUMN email_verified_at TEXT;
-- Addresses are stored lowercased; one account per address.
CREATE UNIQUE INDEX users_email ON users(email) WHERE email IS NOT NULL;

ALTER TABLE api_keys ADD COLUMN name TEXT;
-- Written at most once a minute per key by the Bearer middleware.
ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;

-- Only the SHA-256 of the cookie value is kept.
CREATE TABLE sessions (
  hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  csrf_token TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX sessions_user ON sessions(user_id);
CREATE INDEX sessions_expires ON sessions(expires_at);

-- Single-use links sent by mail: address verification and password reset (SHA-256 only).
-- A verification carries the password chosen at sign-up: it takes effect when the link is followed.
CREATE TABLE mail_tokens (
  hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id),
  purpose TEXT NOT NULL CHECK (purpose IN ('verify', 'reset')),
  password_hash TEXT,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX mail_tokens_user ON mail_tokens(user_id);
CREATE INDEX mail_tokens_expires ON mail_tokens(expires_at);

-- Failed sign-ins per subject ("account:<email>" or "address:<ip>") in a fixed window.
CREATE TABLE signin_failures (
  subject TEXT PRIMARY KEY,
  failures INTEGER NOT NULL,
  window_ends_at INTEGER NOT NULL
);

-- Development only: mails land here instead of being sent (GET /console/api/dev/outbox).
CREATE TABLE dev_outbox (
  id TEXT PRIMARY KEY,
  to_address TEXT NOT NULL,
  subject TEXT NOT NULL,
  text TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX dev_outbox_created ON dev_outbox(created_at DESC);
