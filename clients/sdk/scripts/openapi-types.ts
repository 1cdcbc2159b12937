import openapiTS, { COMMENT_HEADER, astToString } from "openapi-typescript";

/** The checked-in snapshot is this exact text: two-space JSON and a final newline, so diffs stay readable. */
export function documentText(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** The TypeScript types for an OpenAPI document, as `src/openapi.ts` holds them. */
export async function typesFor(documentJson: string): Promise<string> {
  const ast = await openapiTS(documentJson, { alphabetize: false, exportType: false });
  return `${COMMENT_HEADER}${astToString(ast)}`;
}
