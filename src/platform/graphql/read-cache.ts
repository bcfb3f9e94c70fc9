import { getNamedType, Kind, TypeInfo, visit, visitWithTypeInfo, type DocumentNode, type GraphQLSchema } from "graphql";
import type { Plugin } from "graphql-yoga";

/** True when the document is one query that selects only `fields` (schema coordinates; fragments and __typename included). */
export function isCacheableQuery(schema: GraphQLSchema, document: DocumentNode, fields: ReadonlySet<string>): boolean {
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  if (operations.length !== 1 || operations[0].operation !== "query") return false;
  let cacheable = true;
  const typeInfo = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        if (node.name.value.startsWith("__")) return;
        const parent = typeInfo.getParentType();
        const coordinate = parent && `${getNamedType(parent).name}.${node.name.value}`;
        if (!coordinate || !fields.has(coordinate)) cacheable = false;
      },
    }),
  );
  return cacheable;
}

/** Answers kept at most, over all documents and variables. */
const MAX_ENTRIES = 256;

/** A kept answer: the result at `version`, and the JSON Yoga sends for it once a request has been answered with it. */
interface Kept {
  version: number;
  result: unknown;
  json?: string;
}

/**
 * Yoga plugin: the result of a query made only of `fields` — fields whose every change moves `version` (a
 * feature's read views: at once on the writing instance, on the others when the event arrives) — is kept with
 * the version and given again, without execution, while the version has not moved. Results with errors are not kept.
 * The JSON text of the answer is kept too: serialising a 50-node project (33 KB) was half of a hit's cost. Yoga
 * serialises a result with its `stringify` when it has one; the answer for a kept result (the other plugins' additions
 * included, such as the cost in `extensions`, a function of the same document and variables) is made once and reused.
 */
export function useReadCache(fields: ReadonlySet<string>, version: () => number): Plugin {
  const cacheable = new WeakMap<DocumentNode, boolean>();
  const results = new Map<string, Kept>();
  const documentKeys = new WeakMap<DocumentNode, string>();
  /**
   * The kept answer each HTTP request was given (graphql-ws has no `request`: its results are written as they are).
   * Only hits: a hit's answer is a function of the kept result alone, so the first hit's text serves the others.
   */
  const answered = new WeakMap<object, Kept>();
  let nextDocument = 0;
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const { document, schema } = args;
      let ok = cacheable.get(document);
      if (ok === undefined) cacheable.set(document, (ok = isCacheableQuery(schema, document, fields)));
      if (!ok) return;
      // Parsed documents are cached by Yoga, so one query text is one document object: number it once.
      let doc = documentKeys.get(document);
      if (!doc) documentKeys.set(document, (doc = String(nextDocument++)));
      const key = `${doc}\u0000${args.operationName ?? ""}\u0000${JSON.stringify(args.variableValues ?? {})}`;
      const request = (args.contextValue as { request?: unknown } | undefined)?.request;
      const at = version();
      const kept = results.get(key);
      if (kept?.version === at) {
        if (typeof request === "object" && request) answered.set(request, kept);
        return setResultAndStopExecution(kept.result as never);
      }
      return {
        onExecuteDone({ result }) {
          if (Symbol.asyncIterator in result || result.errors?.length || version() !== at) return;
          results.delete(key);
          results.set(key, { version: at, result });
          if (results.size > MAX_ENTRIES) results.delete(results.keys().next().value!);
        },
      };
    },
    onResultProcess({ request, result, setResult }) {
      const kept = answered.get(request);
      if (!kept || Array.isArray(result) || Symbol.asyncIterator in result || result.errors?.length || result.extensions?.http) return;
      const json = (kept.json ??= JSON.stringify(result));
      setResult(Object.defineProperty({ ...result }, "stringify", { value: () => json }));
    },
  };
}
