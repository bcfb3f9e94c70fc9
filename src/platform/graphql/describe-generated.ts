import { getNamedType, isObjectType, isUnionType, type GraphQLField, type GraphQLSchema } from "graphql";

/**
 * The types plugins generate around a field — a result union and its success object (plugin-errors), a connection
 * and its edge (plugin-relay, plugin-prisma) — take their descriptions from the field they answer, so every type
 * and field a client explores is described (the schema lint checks it) without a description per wrapper.
 * Described in place, once, before the schema is served or printed; a description given in code is kept.
 */
export function describeGenerated(schema: GraphQLSchema): GraphQLSchema {
  for (const parent of Object.values(schema.getTypeMap())) {
    if (!isObjectType(parent) || parent.name.startsWith("__")) continue;
    for (const field of Object.values(parent.getFields())) describeAnswer(`${parent.name}.${field.name}`, field);
  }
  return schema;
}

/** The first sentence of a description (up to a period before a capital: "e.g. x" goes on), for a wrapper to quote. */
const gist = (text: string | null | undefined, fallback: string) => (text ? text.split(/(?<=\.)\s+(?=[A-Z])|\n/)[0].replace(/\.$/, "") : fallback);

function describeAnswer(coordinate: string, field: GraphQLField<unknown, unknown>) {
  const named = getNamedType(field.type);
  const what = gist(field.description, coordinate);
  let answer = named;
  if (isUnionType(named) && named.name.endsWith("Result")) {
    // The answer itself is a member (`Volume | NotFoundError`), or a `…Success` wraps one a union cannot hold.
    const members = named.getTypes();
    const success = members.find((m) => m.name === named.name.replace(/Result$/, "Success"));
    const direct = members.find((m) => !m.getInterfaces().some((i) => i.name === "Error"));
    if (!success) {
      if (direct) named.description ??= `What \`${coordinate}\` answers: the \`${direct.name}\`, or one of the typed errors that says why not`;
      answer = direct ?? named;
    } else {
      const data = success.getFields().data;
      named.description ??= `What \`${coordinate}\` answers: \`${success.name}\` with the answer, or one of the typed errors that says why there is none`;
      // Only an answer a union cannot hold as a member (a scalar, a list, an interface) is wrapped (the schema lint).
      success.description ??= `\`${coordinate}\` succeeded: its answer is \`data\`, wrapped: a union cannot hold ${data ? String(data.type) : "it"} as a member`;
      if (!data) return;
      data.description ??= what;
      answer = getNamedType(data.type);
    }
  }
  if (!isObjectType(answer) || !answer.name.endsWith("Connection")) return;
  answer.description ??= `A page of ${lowerFirst(what)}`;
  const fields = answer.getFields();
  if (fields.totalCount) fields.totalCount.description ??= "Elements in the whole list (every page, with the same filter)";
  const edge = fields.edges && getNamedType(fields.edges.type);
  if (!isObjectType(edge)) return;
  edge.description ??= `One element of \`${coordinate}\` and its cursor`;
  const node = edge.getFields().node;
  if (node) node.description ??= `The element (${getNamedType(node.type).name})`;
}

const lowerFirst = (s: string) => (/^[A-Z][a-z]/.test(s) ? s[0].toLowerCase() + s.slice(1) : s);
