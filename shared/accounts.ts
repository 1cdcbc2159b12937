import { generateApiKey } from "./api-keys";
import { randomHex } from "./encoding";
import { hashToken } from "./token-hash";

export interface Statement {
  sql: string;
  params: (string | null)[];
}

const USER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.@+-]{0,63}$/;

export function isValidUserName(name: string): boolean {
  return USER_NAME.test(name);
}

/**
 * The statements that create a user (if new) and give it a fresh key. Shared by the key CLI and
 * tests. With `email` the user's address is set too (lowercased): the console's password reset
 * then lets the user choose a password and sign in.
 */
export async function newKeyStatements(userName: string, now = new Date(), email?: string): Promise<{ key: string; prefix: string; userId: string; statements: Statement[] }> {
  if (!isValidUserName(userName)) throw new Error(`'${userName}' is not a valid user name (letters, digits and _.@+-, at most 64).`);
  const { key, prefix } = generateApiKey();
  const userId = `usr_${randomHex(8)}`;
  const created = now.toISOString();
  return {
    key,
    prefix,
    userId,
    statements: [
      { sql: "INSERT INTO users (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT(name) DO NOTHING", params: [userId, userName, created] },
      ...(email ? [{ sql: "UPDATE users SET email = ? WHERE name = ?", params: [email.trim().toLowerCase(), userName] }] : []),
      {
        sql: "INSERT INTO api_keys (hash, prefix, user_id, created_at) SELECT ?, ?, id, ? FROM users WHERE name = ?",
        params: [await hashToken(key), prefix, created, userName],
      },
    ],
  };
}
