import { createHash, timingSafeEqual } from "node:crypto";
import { bearerToken } from "../../shared/bearer";

/**
 * True when an Authorization header carries `Bearer <secret>`. Both sides are hashed
 * first so the comparison takes the same time whatever the length or content of the guess.
 */
export function bearerMatches(header: string | undefined, secret: string): boolean {
  const token = bearerToken(header) ?? "";
  const given = createHash("sha256").update(token).digest();
  const expected = createHash("sha256").update(secret).digest();
  return timingSafeEqual(given, expected) && token.length > 0;
}
