import { scrypt, timingSafeEqual } from "node:crypto";

/**
 * scrypt through workerd's node:crypto (BoringSSL), not a JavaScript port: natively it costs a
 * few times less CPU for the same memory-hardness. N=2^15, r=8, p=3 is one of OWASP's
 * equivalent scrypt settings (32 MiB, since Workers isolates have 128 MB; N=2^17 would not fit).
 * https://cheatsheetseries.owasp.org/cheatsheets/Password_Storage_Cheat_Sheet.html#scrypt
 * Measured in workerd: test/edge/accounts/passwords.test.ts logs it; docs/console-api.md notes it.
 * The parameters are stored with each hash, so raising them later keeps old hashes readable.
 */
export const SCRYPT_PARAMS = { N: 2 ** 15, r: 8, p: 3 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;

export async function hashPassword(password: string, params: { N: number; r: number; p: number } = SCRYPT_PARAMS): Promise<string> {
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  const hash = await derive(password, salt, params);
  return ["scrypt", params.N, params.r, params.p, toBase64(salt), toBase64(hash)].join("$");
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, N, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = fromBase64(hash);
  const actual = await derive(password, fromBase64(salt), { N: Number(N), r: Number(r), p: Number(p) });
  return actual.byteLength === expected.byteLength && timingSafeEqual(actual, expected);
}

/**
 * Sign-in runs this for an unknown address so that it takes as long as a wrong password:
 * response time does not tell which addresses have accounts.
 */
export async function burnPasswordCheck(password: string): Promise<void> {
  await derive(password, new Uint8Array(SALT_BYTES), SCRYPT_PARAMS);
}

function derive(password: string, salt: Uint8Array, params: { N: number; r: number; p: number }): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    // node's default maxmem (32 MiB) is just below what N=2^15, r=8 needs (128 * N * r plus buffers).
    scrypt(password.normalize("NFKC"), salt, KEY_BYTES, { ...params, maxmem: 64 * 1024 * 1024 }, (error, key) => (error ? reject(error) : resolve(new Uint8Array(key))));
  });
}

function toBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

function fromBase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
}
