/**
 * Secrets we must use again (a destination's S3 credentials, the webhook signing secrets), sealed
 * with AES-GCM so that a D1 export or backup does not reveal them. The key is derived from
 * SIGNING_SECRET with HKDF under a label of the caller's own, so each kind of secret has its
 * own key; rotating SIGNING_SECRET makes stored secrets unreadable (their owners enter them
 * again). `boundTo` (the owner and the row's id) is the associated data: a sealed value moved to
 * another row or user does not open.
 */
export async function seal(signingSecret: string, label: string, boundTo: string, plaintext: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: encode(boundTo) }, await keyFor(signingSecret, label), encode(plaintext));
  const out = new Uint8Array(iv.byteLength + sealed.byteLength);
  out.set(iv, 0);
  out.set(new Uint8Array(sealed), iv.byteLength);
  return toBase64(out);
}

/** The plaintext of `seal`; throws when the value, its label or what it is bound to differ. */
export async function open(signingSecret: string, label: string, boundTo: string, sealed: string): Promise<string> {
  const bytes = Uint8Array.from(atob(sealed), (char) => char.charCodeAt(0));
  const plain = await crypto.subtle.decrypt({ name: "AES-GCM", iv: bytes.slice(0, 12), additionalData: encode(boundTo) }, await keyFor(signingSecret, label), bytes.slice(12));
  return new TextDecoder().decode(plain);
}

async function keyFor(signingSecret: string, label: string): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey("raw", encode(signingSecret), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey({ name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encode(label) }, material, { name: "AES-GCM", length: 256 }, false, ["encrypt", "decrypt"]);
}

function encode(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}
