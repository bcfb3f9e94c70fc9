import type { Plugin } from "graphql-yoga";
import {
  GraphQLError,
  Kind,
  parse,
  type DefinitionNode,
  type DocumentNode,
  type ExecutionArgs,
  type FragmentDefinitionNode,
  type ParseOptions,
  type SelectionSetNode,
  type Source,
  type ValueNode,
} from "graphql";
import { checkCost, operationCost, type CostModel } from "./cost.js";

/**
 * Resource limits for GraphQL requests, checked before the (superlinear) standard validation and before
 * execution, so a hostile document costs milliseconds: the nesting of the source text (graphql-js parses
 * recursively), its token count, selection depth, field count (aliases and fragment spreads expanded), aliases,
 * and the size and nesting of input values (literals and variables); before execution, the operation's cost
 * (cost.ts).
 */
export const GRAPHQL_LIMITS = {
  /** Tokens in one document (graphql-js aborts parsing beyond). */
  maxTokens: 10_000,
  /** Brackets ({ [ () open at once in the source text. */
  maxNesting: 64,
  /** Depth of nested selections, fragments expanded. */
  maxDepth: 15,
  /** Fields selected in total, fragments expanded (the cost bound: aliases repeat fields). */
  maxFields: 1_000,
  /** Aliased fields in one document. */
  maxAliases: 100,
  /** Elements of one list in an input value (a literal or a variable). */
  maxListLength: 100,
  /** Nesting of objects and lists in one input value. */
  maxInputDepth: 16,
} as const;

const L = GRAPHQL_LIMITS;
const limitError = (message: string) => new GraphQLError(message, { extensions: { code: "QUERY_TOO_COMPLEX" } });

/** Deepest bracket nesting in a GraphQL source, skipping strings, block strings and comments. */
export function sourceNesting(source: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "#") {
      while (i < source.length && source[i] !== "\n" && source[i] !== "\r") i++;
    } else if (c === '"' && source.startsWith('"""', i)) {
      i += 3;
      while (i < source.length && !source.startsWith('"""', i)) i += source.startsWith('\\"""', i) ? 4 : 1;
      i += 2;
    } else if (c === '"') {
      i++;
      while (i < source.length && source[i] !== '"' && source[i] !== "\n") i += source[i] === "\\" ? 2 : 1;
    } else if (c === "{" || c === "[" || c === "(") {
      max = Math.max(max, ++depth);
    } else if (c === "}" || c === "]" || c === ")") {
      depth--;
    }
  }
  return max;
}

function parseWithinLimits(source: string | Source, options?: ParseOptions): DocumentNode {
  const body = typeof source === "string" ? source : source.body;
  if (sourceNesting(body) > L.maxNesting) throw limitError(`Syntax Error: the document nests brackets deeper than ${L.maxNesting} levels.`);
  return parse(source, { ...options, maxTokens: L.maxTokens });
}

/** Walks an input value without recursion; returns an error message or undefined. */
function checkInputValue(root: unknown, isList: (v: unknown) => unknown[] | undefined, children: (v: unknown) => unknown[]): string | undefined {
  const stack: { v: unknown; depth: number }[] = [{ v: root, depth: 0 }];
  while (stack.length) {
    const { v, depth } = stack.pop()!;
    if (depth > L.maxInputDepth) return `Input values may nest at most ${L.maxInputDepth} levels.`;
    const list = isList(v);
    if (list && list.length > L.maxListLength) return `Input lists may hold at most ${L.maxListLength} elements.`;
    for (const child of children(v)) stack.push({ v: child, depth: depth + 1 });
  }
  return undefined;
}

const literalChildren = (v: unknown): unknown[] => {
  const node = v as ValueNode;
  if (node.kind === Kind.LIST) return [...node.values];
  if (node.kind === Kind.OBJECT) return node.fields.map((f) => f.value);
  return [];
};
const literalList = (v: unknown) => ((v as ValueNode).kind === Kind.LIST ? [...(v as { values: readonly ValueNode[] }).values] : undefined);

/** Only JSON's containers: a value that is neither (a multipart upload's File) is a leaf, whatever it holds inside. */
const jsonChildren = (v: unknown): unknown[] => (Array.isArray(v) || isPlainObject(v) ? Object.values(v as object) : []);
const isPlainObject = (v: unknown) => v !== null && typeof v === "object" && [Object.prototype, null].includes(Object.getPrototypeOf(v));
const jsonList = (v: unknown) => (Array.isArray(v) ? v : undefined);

/** The variables of one request, as the client sent them. */
export function checkVariables(variables: unknown): GraphQLError | undefined {
  const message = variables ? checkInputValue(variables, jsonList, jsonChildren) : undefined;
  return message ? limitError(message) : undefined;
}

/** Depth, field count, aliases and input literals of a parsed document; the first limit exceeded, if any. */
export function checkDocument(doc: DocumentNode): GraphQLError | undefined {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of doc.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const cost = new Map<string, { depth: number; fields: number }>();
  let aliases = 0;
  let literalError: string | undefined;

  // Depth (relative) and field count of a selection set, exploring at most `budget` levels: enough to know a
  // limit is exceeded, and recursion stays shallow. Fragments are measured once with a full budget; cycles
  // count as nothing (the standard validation reports them).
  const measure = (set: SelectionSetNode, budget: number, visiting: Set<string>): { depth: number; fields: number } => {
    let depth = 0;
    let fields = 0;
    if (budget <= 0) return { depth: 1, fields: 0 };
    for (const sel of set.selections) {
      let sub = { depth: 0, fields: 0 };
      if (sel.kind === Kind.FIELD) {
        if (sel.alias) aliases++;
        for (const arg of sel.arguments ?? []) literalError ??= checkInputValue(arg.value, literalList, literalChildren);
        if (sel.selectionSet) sub = measure(sel.selectionSet, budget - 1, visiting);
        sub = { depth: sub.depth + 1, fields: sub.fields + 1 };
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        sub = measure(sel.selectionSet, budget, visiting);
      } else {
        const name = sel.name.value;
        const frag = fragments.get(name);
        if (!frag || visiting.has(name)) continue;
        const known = cost.get(name);
        if (known) sub = known;
        else {
          visiting.add(name);
          sub = measure(frag.selectionSet, L.maxDepth + 1, visiting);
          visiting.delete(name);
          cost.set(name, sub);
        }
      }
      depth = Math.max(depth, sub.depth);
      fields += sub.fields;
      if (fields > L.maxFields) break;
    }
    return { depth, fields };
  };

  let fields = 0;
  for (const d of doc.definitions as readonly DefinitionNode[]) {
    if (d.kind !== Kind.OPERATION_DEFINITION) continue;
    for (const v of d.variableDefinitions ?? []) if (v.defaultValue) literalError ??= checkInputValue(v.defaultValue, literalList, literalChildren);
    const m = measure(d.selectionSet, L.maxDepth + 1, new Set());
    if (m.depth > L.maxDepth) return limitError(`Query is nested deeper than ${L.maxDepth} levels.`);
    fields += m.fields;
    if (fields > L.maxFields) return limitError(`Query selects more than ${L.maxFields} fields.`);
  }
  if (aliases > L.maxAliases) return limitError(`Query uses more than ${L.maxAliases} aliases.`);
  return literalError ? limitError(literalError) : undefined;
}

/**
 * The limits as a Yoga/envelop plugin: on parse, before validation, and before execution (variables, then the
 * operation's cost, which needs them).
 */
export function useResourceLimits(costModel: CostModel): Plugin {
  const check = (args: ExecutionArgs) => {
    const variables = (args.variableValues ?? {}) as Record<string, unknown>;
    return checkVariables(args.variableValues) ?? checkCost(args.schema, args.document, args.operationName, variables, costModel);
  };
  return {
    onParse: ({ setParseFn }) => setParseFn(parseWithinLimits),
    onValidate: ({ params, setResult }) => {
      const error = checkDocument(params.documentAST);
      if (error) setResult([error]);
    },
    // A query's or mutation's answer reports its cost against the budget (`extensions.cost`), so a client sees how
    // close an operation is before it is refused. Not a subscription's events: they are written as they are.
    onExecute: ({ args, setResultAndStopExecution }) => {
      const error = check(args);
      if (error) return setResultAndStopExecution({ errors: [error] });
      const requested = Math.round(operationCost(args.schema, args.document, args.operationName, (args.variableValues ?? {}) as Record<string, unknown>, costModel));
      return {
        onExecuteDone: ({ result, setResult }) => {
          if (Symbol.asyncIterator in result) return;
          setResult({ ...result, extensions: { ...result.extensions, cost: { requested, limit: costModel.limit, listSize: costModel.listSize } } });
        },
      };
    },
    onSubscribe: ({ args, setResultAndStopExecution }) => {
      const error = check(args);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
  };
}
