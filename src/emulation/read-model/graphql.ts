import { getNamedType, Kind, TypeInfo, visit, visitWithTypeInfo, type DocumentNode, type GraphQLSchema } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { ProjectReadModel } from "./views.js";

/**
 * The fields whose every change is announced by a project or topology event (so drops the read views): a query
 * made only of them can be answered again from memory until the next such event. Not here: anything read from
 * the runtime, computes (their usage changes without a write), snapshots (created without an event), storage.
 */
export const CACHEABLE_FIELDS = new Set([
  "Query.project",
  "Query.projects",
  "Query.emulatedNode",
  "Query.link",
  "Query.drawing",
  "QueryEmulatedNodeSuccess.data",
  "QueryLinkSuccess.data",
  "QueryDrawingSuccess.data",
  ...[
    "id", "name", "path", "filename", "status", "autoClose", "autoOpen", "autoStart", "sceneHeight", "sceneWidth", "zoom",
    "showLayers", "snapToGrid", "showGrid", "gridSize", "drawingGridSize", "showInterfaceLabels", "supplier", "variables",
    "nodes", "links", "drawings",
  ].map((f) => `Project.${f}`),
  ...[
    "id", "projectId", "computeId", "templateId", "nodeType", "name", "status", "console", "consoleHost", "consoleType",
    "consoleAutoStart", "commandLine", "nodeDirectory", "properties", "label", "symbol", "width", "height", "x", "y", "z",
    "locked", "portNameFormat", "portSegmentSize", "firstPortName", "customAdapters", "ports",
  ].map((f) => `EmulatedNode.${f}`),
  ...["name", "shortName", "adapterNumber", "portNumber", "linkType", "dataLinkTypes"].map((f) => `NodePort.${f}`),
  ...[
    "id", "projectId", "linkType", "endpoints", "filters", "linkStyle", "suspend", "capturing", "captureFileName",
    "captureFilePath", "captureComputeId",
  ].map((f) => `Link.${f}`),
  ...["node", "adapterNumber", "portNumber", "label"].map((f) => `LinkEndpoint.${f}`),
  ...["id", "projectId", "x", "y", "z", "locked", "rotation", "svg", "shape"].map((f) => `Drawing.${f}`),
]);

/** True when the document is one query that selects only cacheable fields (fragments and __typename included). */
export function isCacheableQuery(schema: GraphQLSchema, document: DocumentNode): boolean {
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
        if (!coordinate || !CACHEABLE_FIELDS.has(coordinate)) cacheable = false;
      },
    }),
  );
  return cacheable;
}

/** Answers kept at most, over all documents and variables. */
const MAX_ENTRIES = 256;

/**
 * Yoga plugin: a cacheable query's result is kept with the read views' version and given again, without
 * execution, while the version has not moved (any project or topology change moves it, on this instance at
 * once and on the others when the event arrives). Results with errors are not kept.
 */
export function useReadCache(reads: Pick<ProjectReadModel, "version">): Plugin {
  const cacheable = new WeakMap<DocumentNode, boolean>();
  const results = new Map<string, { version: number; result: unknown }>();
  const documentKeys = new WeakMap<DocumentNode, string>();
  let nextDocument = 0;
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const { document, schema } = args;
      let ok = cacheable.get(document);
      if (ok === undefined) cacheable.set(document, (ok = isCacheableQuery(schema, document)));
      if (!ok) return;
      // Parsed documents are cached by Yoga, so one query text is one document object: number it once.
      let doc = documentKeys.get(document);
      if (!doc) documentKeys.set(document, (doc = String(nextDocument++)));
      const key = `${doc}\u0000${args.operationName ?? ""}\u0000${JSON.stringify(args.variableValues ?? {})}`;
      const version = reads.version();
      const kept = results.get(key);
      if (kept?.version === version) return setResultAndStopExecution(kept.result as never);
      return {
        onExecuteDone({ result }) {
          if (Symbol.asyncIterator in result || result.errors?.length || reads.version() !== version) return;
          results.delete(key);
          results.set(key, { version, result });
          if (results.size > MAX_ENTRIES) results.delete(results.keys().next().value!);
        },
      };
    },
  };
}
