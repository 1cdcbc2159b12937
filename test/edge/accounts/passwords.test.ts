import { describe, expect, it } from "vitest";
import { SCRYPT_PARAMS, hashPassword, verifyPassword } from "../../../edge/accounts/passwords";

describe("password hashing (scrypt in workerd)", () => {
  it("verifies the right password, refuses a wrong one, and salts every hash", async () => {
    const started = performance.now();
    const stored = await hashPassword("correct horse battery");
    // Informational only (timing targets live in benchmarks): the cost as this machine measures it.
    console.log(JSON.stringify({ msg: "scrypt cost", params: SCRYPT_PARAMS, ms: Math.round(performance.now() - started) }));
    expect(stored).toMatch(/^scrypt\$32768\$8\$3\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
    expect(await verifyPassword("correct horse battery", stored)).toBe(true);
    expect(await verifyPassword("correct horse batterY", stored)).toBe(false);
    expect(await hashPassword("correct horse battery")).not.toBe(stored);
  });

  it("reads the parameters from the stored hash, so they can be raised later", async () => {
    const cheap = await hashPassword("pw", { N: 2 ** 10, r: 8, p: 1 });
    expect(cheap.startsWith("scrypt$1024$8$1$")).toBe(true);
    expect(await verifyPassword("pw", cheap)).toBe(true);
  });

  it("treats a visually identical password in another Unicode form as the same (NFKC)", async () => {
    const stored = await hashPassword("caf\u00e9 au lait!", { N: 2 ** 10, r: 8, p: 1 });
    expect(await verifyPassword("cafe\u0301 au lait!", stored)).toBe(true);
  });

  it("refuses anything that is not a scrypt hash", async () => {
    expect(await verifyPassword("x", "plain")).toBe(false);
    expect(await verifyPassword("x", "bcrypt$2b$10$abc")).toBe(false);
  });
});
