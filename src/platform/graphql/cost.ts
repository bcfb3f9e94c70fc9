import {
  getNamedType,
  getNullableType,
  GraphQLError,
  isCompositeType,
  isListType,
  isObjectType,
  isInterfaceType,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValueNode,
} from "graphql";
import { excessivePagination, isPagedField, MAX_PAGE_SIZE } from "./connection.js";

/**
 * The static cost of a GraphQL operation, known before it runs: every field selected counts once per value the
 * server resolves for it, so a list field multiplies what it holds by its `first`/`last` argument when given,
 * else by an assumed list size; a paginated field (a connection) passes its `first`/`last` on to the lists
 * directly inside it (`edges`). Fragments are expanded (every type condition counted: an upper bound),
 * variables applied, introspection (`__schema`, `__type`: bounded by the schema) free. Nested lists are what
 * makes a small document expensive: `project{nodes{links{endpoints{node{links{…}}}}}}` multiplies at each level.
 */
export interface CostModel {
  /** The most an operation may cost; a costlier one is refused before it runs. */
  limit: number;
  /** Elements assumed of a list field without first/last. */
  listSize: number;
}

interface Walk {
  schema: GraphQLSchema;
  fragments: Map<string, FragmentDefinitionNode>;
  variables: Record<string, unknown>;
  model: CostModel;
  /** The first page asked larger than MAX_PAGE_SIZE, if any. */
  excessive?: GraphQLError;
}

type ArgumentNodes = readonly { name: { value: string }; value: ValueNode }[] | undefined;

/** `first` and `last` of a field, when given as whole numbers (literals or variables). */
function pageArgs(args: ArgumentNodes, variables: Record<string, unknown>): { name: string; size: number }[] {
  const sizes: { name: string; size: number }[] = [];
  for (const arg of args ?? []) {
    if (arg.name.value !== "first" && arg.name.value !== "last") continue;
    const v = arg.value.kind === Kind.VARIABLE ? variables[arg.value.name.value] : arg.value.kind === Kind.INT ? Number(arg.value.value) : undefined;
    if (typeof v === "number" && Number.isInteger(v) && v >= 0) sizes.push({ name: arg.name.value, size: v });
  }
  return sizes;
}

/**
 * Cost of a selection set on `type`; `lists`: the size its list fields hold (a connection's page size, else the
 * assumed size). Recursion is as deep as the document, which the depth limit (limits.ts) already holds.
 */
function selectionCost(w: Walk, set: SelectionSetNode, type: GraphQLCompositeType, lists: number): number {
  let cost = 0;
  for (const sel of set.selections) {
    if (sel.kind === Kind.FIELD) {
      const name = sel.name.value;
      if (name.startsWith("__")) continue;
      const field = isObjectType(type) || isInterfaceType(type) ? type.getFields()[name] : undefined;
      if (!field) continue; // validation has reported it
      const sizes = pageArgs(sel.arguments, w.variables);
      const page = sizes[0]?.size;
      const over = isPagedField(field) && sizes.find((p) => p.size > MAX_PAGE_SIZE);
      if (over) w.excessive ??= excessivePagination(name, over.name, over.size);
      const isList = isListType(getNullableType(field.type));
      const times = isList ? (page ?? lists) : 1;
      const inner = getNamedType(field.type);
      // A page asked of a field that answers a result union (images(first: 5) { ... on QueryImagesConnection
      // { edges … } }) reaches its connection through the fragment, which keeps `lists`.
      const innerLists = (!isList && page) || w.model.listSize;
      const nested = sel.selectionSet && isCompositeType(inner) ? selectionCost(w, sel.selectionSet, inner, innerLists) : 0;
      cost += times * (1 + nested);
    } else {
      const fragment = sel.kind === Kind.INLINE_FRAGMENT ? sel : w.fragments.get(sel.name.value);
      if (!fragment) continue;
      const on = fragment.typeCondition ? w.schema.getType(fragment.typeCondition.name.value) : type;
      if (on && isCompositeType(on)) cost += selectionCost(w, fragment.selectionSet, on, lists);
    }
  }
  return cost;
}

/**
 * The cost of the operation a request runs (`operationName`, or the document's only one), and the first page it
 * asks larger than MAX_PAGE_SIZE (an error), if any.
 */
function walkOperation(schema: GraphQLSchema, doc: DocumentNode, operationName: string | null | undefined, variables: Record<string, unknown>, model: CostModel): { cost: number; excessive?: GraphQLError } {
  const fragments = new Map<string, FragmentDefinitionNode>();
  let operation: OperationDefinitionNode | undefined;
  for (const d of doc.definitions) {
    if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
    else if (d.kind === Kind.OPERATION_DEFINITION && (!operationName || d.name?.value === operationName)) operation ??= d;
  }
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return { cost: 0 }; // execution reports it
  const walk: Walk = { schema, fragments, variables, model };
  const cost = selectionCost(walk, operation.selectionSet, root, model.listSize);
  return { cost, excessive: walk.excessive };
}

/** The cost of the operation a request runs (`operationName`, or the document's only one). */
export function operationCost(...args: Parameters<typeof walkOperation>): number {
  return walkOperation(...args).cost;
}

/**
 * A page larger than MAX_PAGE_SIZE (EXCESSIVE_PAGINATION), else the operation's cost against the budget: a
 * QUERY_TOO_COMPLEX error naming both when beyond it.
 */
export function checkCost(...args: Parameters<typeof walkOperation>): GraphQLError | undefined {
  const model = args[4];
  const { cost, excessive } = walkOperation(...args);
  if (excessive) return excessive;
  if (cost <= model.limit) return undefined;
  return new GraphQLError(
    `Query cost ${Math.round(cost)} exceeds the budget of ${model.limit} (each list counted as ${model.listSize} elements unless first/last says otherwise; PATCHBAY_GRAPHQL_COST_LIMIT).`,
    { extensions: { code: "QUERY_TOO_COMPLEX", cost: Math.round(cost), budget: model.limit } },
  );
}
