import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { Stack } from "../../../scripts/lib/local-stack";
import { documentText, typesFor } from "./openapi-types";

/**
 * `npm run sdk:generate`: asks the real Worker (workerd, as in development) for the OpenAPI
 * document it serves and writes the snapshot plus the types the SDK is written against.
 */
const stack = await Stack.start();
try {
  const response = await stack.fetch("/openapi.json");
  if (!response.ok) throw new Error(`GET /openapi.json answered ${response.status}`);
  const json = documentText(await response.json());
  await writeFile(fileURLToPath(new URL("../openapi.json", import.meta.url)), json);
  await writeFile(fileURLToPath(new URL("../src/openapi.ts", import.meta.url)), await typesFor(json));
  console.log("clients/sdk/openapi.json and clients/sdk/src/openapi.ts written");
} finally {
  await stack.stop();
}
