import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

type Doc = Record<string, unknown>;

/**
 * The document as the SDK is generated from it: without `servers`, which names the base URL of
 * whichever server produced it (the SDK takes its own `baseUrl`).
 */
export function sdkDocument(doc: Doc): Doc {
  const { servers: _servers, ...rest } = doc;
  return rest;
}

/** The TypeScript types of the document (paths, operations, components), as checked in at src/generated/openapi.ts. */
export async function generateTypes(doc: Doc): Promise<string> {
  const copy = JSON.parse(JSON.stringify(doc)) as Doc;
  // A parameter with a default is one a client may leave out (the server fills it in), though
  // the document marks it required (`limit` and `order` of every list).
  for (const item of Object.values(copy.paths as Record<string, Record<string, { parameters?: { required?: boolean; schema?: { default?: unknown } }[] }>>)) {
    for (const op of Object.values(item)) {
      for (const p of op.parameters ?? []) if (p.schema?.default !== undefined) p.required = false;
    }
  }
  const ast = await openapiTS(copy as never, { alphabetize: false, exportType: false });
  return COMMENT_HEADER + '// Regenerate with `npm run sdk:generate`; test/sdk/openapi-currency.test.ts fails when it is stale.\n\n' + astToString(ast);
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/**
 * Every operation of the document as `operationId: [method, path]`, checked in at
 * src/generated/operations.ts: the SDK's resources name operations by id and never spell a
 * path, so a moved route is a regeneration, not an edit.
 */
export function generateOperations(doc: Doc): string {
  const lines: string[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { operationId?: string }>>)) {
    for (const method of METHODS) {
      const op = item[method];
      if (op?.operationId) lines.push(`  ${op.operationId}: ['${method.toUpperCase()}', '${path}'],`);
    }
  }
  return (
    '// Generated from the OpenAPI document by `npm run sdk:generate`; do not edit.\n\n' +
    `export const OPERATIONS = {\n${lines.join('\n')}\n} as const;\n\nexport type OperationId = keyof typeof OPERATIONS;\n`
  );
}
