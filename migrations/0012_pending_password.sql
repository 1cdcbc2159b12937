-- The password chosen at sign-up waits on the user until the address is verified, instead of
-- inside the verification token (mail tokens are links, not account data).
ALTER TABLE users ADD COLUMN pending_password_hash TEXT;

-- Sign-ups awaiting verification keep their password: only one sign-up per user ever carried one
-- (the one that created the user), so the newest such token holds it.
UPDATE users SET pending_password_hash = (
  SELECT t.password_hash FROM mail_tokens t
  WHERE t.user_id = users.id AND t.purpose = 'verify' AND t.password_hash IS NOT NULL
  ORDER BY t.created_at DESC LIMIT 1
)
WHERE password_hash IS NULL AND email_verified_at IS NULL;

ALTER TABLE mail_tokens DROP COLUMN password_hash;
