/**
 * The credentials of an `Authorization: Bearer <token>` header, or undefined when the header
 * is missing or carries another scheme or more than one token. The one parser of the edge
 * (API keys, task callback tokens) and the transcoder (its shared secret).
 * The scheme name is case-insensitive and may be followed by several spaces (RFC 9110 §11.4).
 *
 * @example bearerToken("Bearer ffe_abc") // "ffe_abc"
 */
export function bearerToken(header: string | null | undefined): string | undefined {
  return /^Bearer +(\S+)$/i.exec(header ?? "")?.[1];
}
