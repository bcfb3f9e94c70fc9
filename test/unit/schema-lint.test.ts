import {
  buildSchema,
  isEnumType,
  isNonNullType,
  getNamedType,
  getNullableType,
  isCompositeType,
  isInputObjectType,
  isInterfaceType,
  isListType,
  isObjectType,
  isUnionType,
  type GraphQLNamedType,
  type GraphQLType,
  type GraphQLArgument,
  type GraphQLInputField,
} from "graphql";
import { describe, expect, it } from "vitest";
import { printedSchema } from "../../src/schema.js";

/**
 * Issue 22's schema lint, over the printed schema (what clients see, schema.graphql): rules a reviewer would
 * otherwise have to remember.
 */
const schema = buildSchema(printedSchema());
const types = Object.values(schema.getTypeMap()).filter((t) => !t.name.startsWith("__"));

/** A name that says it identifies something: `id`, `ids`, `…Id`, `…Ids`, `…Uuid`. */
const IDENTIFIER = /^(id|ids|uuid)$|(Id|Ids|Uuid)$/;

/** Identifier-named inputs that are values of the domain, not references to an object of the graph. */
const NOT_OBJECT_IDS: Record<string, string> = {
  "QuotaUserInput.id": "a UNIX user id (or Windows SID) as the file system knows it",
  "QuotaGroupInput.id": "a UNIX group id as the file system knows it",
};

/**
 * Lists of objects that cannot grow with use, so a page would only cost the client a round trip. Everything
 * else that holds objects is a connection.
 */
const BOUNDED_LISTS: Record<string, string> = {
  "EmulatedNode.ports": "the node's interfaces: fixed by its type and adapters",
  "EmulatedNode.links": "at most one per port of the node",
  "Link.endpoints": "two ends at most",
  "Link.availableFilters": "the fixed catalogue of packet filters",
  "LinkFilterSpec.parameters": "a filter's fixed parameters",
  "CloudSettings.ports": "the ports a cloud node was given (input lists hold at most 100)",
  "EthernetSwitchSettings.ports": "the ports a switch was given (input lists hold at most 100)",
  "EthernetHubSettings.ports": "the ports a hub was given (input lists hold at most 100)",
  "NatSettings.ports": "the ports a NAT node was given (input lists hold at most 100)",
  "Project.variables": "set as one input list (at most 100)",
  "QemuSettings.disks": "the four disk slots of a QEMU VM",
  "QuotaRule.users": "a rule's users: set as one input list (at most 100)",
  "QuotaReport.users": "the users of one report entry, as its rule's",
  "Query.defaultSymbols": "the fixed catalogue of built-in symbols",
  "Query.hostInterfaces": "the network interfaces of this host",
  "Query.simVmEngines": "the fixed list of VM engines",
  "Query.computeStatistics": "one entry per compute: this host and each connected remote compute",
  "EmulatedNode.customAdapters": "one override at most per adapter of the node",
  "Template.customAdapters": "one override at most per adapter of its nodes",
  "NodePort.dataLinkTypes": "the few link-layer types a port offers",
  "Query.nodes": "the entities of the global ids asked for, in their order (at most a page of ids)",
};

function identifierViolations(): string[] {
  const bad: string[] = [];
  const check = (where: string, input: GraphQLArgument | GraphQLInputField) => {
    const named = getNamedType(input.type);
    if (IDENTIFIER.test(input.name) && (named.name === "String" || named.name === "Int") && !NOT_OBJECT_IDS[where]) bad.push(`${where}: ${String(input.type)}`);
  };
  for (const t of types) {
    if (isObjectType(t) || isInterfaceType(t)) for (const f of Object.values(t.getFields())) for (const a of f.args) check(`${t.name}.${f.name}(${a.name})`, a);
    if (isInputObjectType(t)) for (const f of Object.values(t.getFields())) check(`${t.name}.${f.name}`, f);
  }
  return bad;
}

/** GraphQL's own scalars: described by the specification, not by this schema. */
const BUILT_IN_SCALARS = new Set(["String", "Int", "Float", "Boolean", "ID"]);

/**
 * Every type, field, argument and enum value a client can explore, without a description. Types plugins generate
 * (result unions, success objects, connections, edges, PageInfo) are included: they are described from the field
 * they answer (platform/graphql/describe-generated.ts) or by the relay plugin's options (builder.ts).
 */
function undescribed(): string[] {
  const bad: string[] = [];
  const check = (where: string, description: string | null | undefined) => {
    if (!description?.trim()) bad.push(where);
  };
  for (const t of types) {
    if (BUILT_IN_SCALARS.has(t.name)) continue;
    check(t.name, t.description);
    if (isObjectType(t) || isInterfaceType(t) || isInputObjectType(t)) {
      for (const f of Object.values(t.getFields())) {
        check(`${t.name}.${f.name}`, f.description);
        if ("args" in f) for (const a of f.args) check(`${t.name}.${f.name}(${a.name})`, a.description);
      }
    }
    if (isEnumType(t)) for (const v of t.getValues()) check(`${t.name}.${v.name}`, v.description);
  }
  return bad;
}

function collectionViolations(): string[] {
  const bad: string[] = [];
  for (const t of types) {
    if (!(isObjectType(t) || isInterfaceType(t)) || t.name.endsWith("Connection")) continue; // a connection's own `edges`
    for (const f of Object.values(t.getFields())) {
      const coordinate = `${t.name}.${f.name}`;
      if (isListType(getNullableType(f.type)) && isCompositeType(getNamedType(f.type)) && !BOUNDED_LISTS[coordinate]) bad.push(`${coordinate}: ${String(f.type)}`);
    }
  }
  return bad;
}

/** Mutations without an argument: there is nothing to say but "do it" (an `input` would be an empty type). */
const NO_INPUT: Record<string, string> = {
  shutdownServer: "stops this server: nothing to choose",
  writeDebugBundle: "writes the debug files of this server: nothing to choose",
};

/**
 * Object types with an `id` that are not entities of the graph: their `id` is a value a cache may key as it is,
 * not a global id. Every other type with an `id` implements Node, so its `id` is global and `node(id:)` finds it.
 */
const NOT_NODES: Record<string, string> = {
  QuotaUser: "a user as the file system knows it (a UNIX uid or a Windows SID), not an object of the graph",
  QuotaGroup: "a group as the file system knows it (a UNIX gid), not an object of the graph",
};

const upperFirst = (s: string) => s[0].toUpperCase() + s.slice(1);

const mutations = () => Object.values(schema.getMutationType()!.getFields());

/** Mutations whose arguments are not exactly `input: <Mutation>Input!` (nor none, for one listed in NO_INPUT). */
function mutationInputViolations(): string[] {
  const bad: string[] = [];
  for (const m of mutations()) {
    const args = m.args.map((a) => `${a.name}: ${String(a.type)}`).join(", ");
    const expected = NO_INPUT[m.name] ? "" : `input: ${upperFirst(m.name)}Input!`;
    const input = m.args[0];
    // The printed type alone would also match a scalar or enum named …Input.
    if (args !== expected || (input && !isInputObjectType(getNamedType(input.type)))) bad.push(`${m.name}(${args})`);
  }
  return bad;
}

/** Mutations that do not answer `<Mutation>Result!`, a union of `<Mutation>Payload` and types implementing Error. */
function mutationResultViolations(): string[] {
  const bad: string[] = [];
  for (const m of mutations()) {
    const Name = upperFirst(m.name);
    const result = getNullableType(m.type);
    const members = isUnionType(result) ? result.getTypes().map((t) => t.name) : [];
    if (!isNonNullType(m.type) || !isUnionType(result) || result.name !== `${Name}Result` || members.filter((n) => !errorMember(n)).join() !== `${Name}Payload`) {
      bad.push(`${m.name}: ${String(m.type)}${members.length ? ` = ${members.join(" | ")}` : ""}`);
    }
  }
  return bad;
}

/** An object type that implements Error. */
const errorMember = (name: string) => {
  const t = schema.getType(name);
  return isObjectType(t) && t.getInterfaces().some((i) => i.name === "Error");
};

/** Result unions (`…Result`) that are not one answer (a payload, the answer itself, or its `…Success` wrapper) and Errors. */
function unionMembersOffError(): string[] {
  return types.filter(isUnionType).filter((u) => u.name.endsWith("Result")).flatMap((u) => {
    const answers = u.getTypes().filter((m) => !errorMember(m.name));
    return answers.length === 1 ? [] : [`${u.name}: ${answers.map((m) => m.name).join(" | ") || "no answer"}`];
  });
}

/**
 * `…Success { data }` wrappers around an answer a union could hold itself (an object type: an entity, a
 * connection …). A wrapper is only for a scalar, a list or an interface, which cannot be a union's member.
 */
function needlessWrappers(): string[] {
  return types
    .filter(isObjectType)
    .filter((t) => t.name.endsWith("Success"))
    .flatMap((t) => {
      const data = t.getFields().data;
      return !data || isObjectType(getNullableType(data.type)) ? [`${t.name}.data: ${String(data?.type)}`] : [];
    });
}

/** The answer of a field: its type, or the one member of its result union that is not an Error. */
const answerOf = (type: GraphQLType) => {
  const named = getNamedType(type);
  return isUnionType(named) ? named.getTypes().find((m) => !errorMember(m.name)) : named;
};

/** Query fields that look an entity up by its id alone: `x(id: ID!)` answering an entity (or a union with one). */
const lookups = () =>
  Object.values(schema.getQueryType()!.getFields()).filter((f) => f.args.map((a) => `${a.name}: ${String(a.type)}`).join() === "id: ID!" && isNode(answerOf(f.type)));

/**
 * By-id lookups that answer absence with an error, not null: non-null, or a union that lists NotFoundError or
 * InvalidInputError (a malformed id, or another type's, names nothing either).
 */
function lookupViolations(): string[] {
  return lookups().flatMap((f) => {
    const named = getNamedType(f.type);
    const absentAsError = isUnionType(named) && named.getTypes().some((m) => m.name === "NotFoundError" || m.name === "InvalidInputError");
    return isNonNullType(f.type) || absentAsError ? [`${f.name}: ${String(f.type)}${isUnionType(named) ? ` = ${named.getTypes().join(" | ")}` : ""}`] : [];
  });
}

/** Why the node lifecycle mutations can raise every typed error. */
const NODE_ACTION = "a node's compute (a remote one through its API, on the instance that runs the project) carries the action out: every error a forwarded request has";
/**
 * Fields (reads, streams and mutations) that can raise every typed error, each with why: the others list only the
 * errors their operation raises, so a client's exhaustive switch stays short.
 */
const EVERY_ERROR: Record<string, string> = {
  "Query.computeResource": "a read passed through to a compute: its answer's every status, mapped as GNS3's controller maps them",
  "Query.dockerImages": "a remote compute's list is a read passed through to it",
  "Query.images": "a remote compute's list is a read passed through to it",
  "Subscription.nodeConsole": "a remote node's console is relayed from its compute, whose refusals are mapped as a forwarded read's",
  "Mutation.forwardToCompute": "a request passed through to a compute: its answer's every status, mapped as GNS3's controller maps them",
  "Mutation.uploadImage": "a remote compute stores the image: its refusals are mapped as a forwarded request's",
  "Mutation.startNode": NODE_ACTION,
  "Mutation.stopNode": NODE_ACTION,
  "Mutation.suspendNode": NODE_ACTION,
  "Mutation.reloadNode": NODE_ACTION,
  "Mutation.projectNodesAction": NODE_ACTION,
  "Mutation.startCapture": "carried out by the instance that runs the project (which may not answer, or fail with an error of its own), where a capture can be refused as a read of it is",
};

/** Fields whose result union lists every typed error, unless listed in EVERY_ERROR. */
function everyErrorViolations(): string[] {
  const all = types.filter((t) => errorMember(t.name)).map((t) => t.name);
  return types
    .filter(isObjectType)
    .flatMap((t) =>
      Object.values(t.getFields()).flatMap((f) => {
        const named = getNamedType(f.type);
        const coordinate = `${t.name}.${f.name}`;
        return isUnionType(named) && all.every((e) => named.getTypes().some((m) => m.name === e)) && !EVERY_ERROR[coordinate] ? [coordinate] : [];
      }),
    );
}

/** The entities issue 22 names: each has a global id, whatever its domain id is called (`uuid` on the storage side). */
const ENTITIES = ["Project", "EmulatedNode", "Link", "Drawing", "Snapshot", "Template", "Compute", "Svm", "Volume", "Qtree", "QuotaRule", "Job"];

const isNode = (t: GraphQLNamedType | undefined) => isObjectType(t) && t.getInterfaces().some((i) => i.name === "Node");

/** Entities, and object types with an `id` field (unless listed in NOT_NODES), that do not implement Node. */
function nodeViolations(): string[] {
  const withId = types.filter((t) => isObjectType(t) && t.getFields().id && !NOT_NODES[t.name]).map((t) => t.name);
  return [...new Set([...ENTITIES, ...withId])].filter((name) => !isNode(schema.getType(name))).sort();
}

/**
 * Units a description can state a number in, and the words of a name that carries that unit (issue 22: units in
 * names). A description states its unit first ("Seconds the URL stays valid") or after "in" ("Memory, in bytes").
 */
const UNIT_WORDS: Record<string, string[]> = {
  bytes: ["bytes"],
  kib: ["kib"],
  kb: ["kb", "kilobytes"],
  mib: ["mib"],
  mb: ["mb", "megabytes"],
  gib: ["gib"],
  gb: ["gb", "gigabytes"],
  "bits per second": ["bps"],
  kbps: ["kbps"],
  mbps: ["mbps"],
  milliseconds: ["ms", "milliseconds"],
  seconds: ["seconds"],
  minutes: ["minutes"],
  percent: ["percent"],
  pixels: ["pixels"],
  degrees: ["degrees"],
};
const STATED_UNIT = new RegExp(`(?:^|\\bin )(${Object.keys(UNIT_WORDS).join("|")})\\b`, "i");
/** A number, or a filter on one: what a unit qualifies. */
const NUMERIC = /^(Int|Float|BigInt)(Filter)?$/;

/** Numbers whose description states a unit their name does not carry, with why; `*.x` is a field `x` of any type. */
const UNIT_NOT_IN_NAME: Record<string, string> = {
  "*.x": "a canvas coordinate (a position or an offset), conventionally in pixels as the description says",
  "*.y": "a canvas coordinate (a position or an offset), conventionally in pixels as the description says",
};

/**
 * Numeric fields, arguments and input fields whose description states a unit their name does not carry, or whose
 * name carries a unit their description does not state.
 */
function unitViolations(among: GraphQLNamedType[]): string[] {
  const bad: string[] = [];
  const check = (where: string, name: string, type: GraphQLType, description: string | null | undefined) => {
    if (!NUMERIC.test(getNamedType(type).name) || UNIT_NOT_IN_NAME[where] || UNIT_NOT_IN_NAME[`*.${name}`]) return;
    const stated = STATED_UNIT.exec(description ?? "")?.[1].toLowerCase();
    const words = name.split(/(?=[A-Z])/).map((w) => w.toLowerCase());
    const named = Object.keys(UNIT_WORDS).filter((unit) => UNIT_WORDS[unit].some((w) => words.includes(w)));
    if (stated ? !named.includes(stated) : named.length) bad.push(`${where}: "${description}"`);
  };
  for (const t of among) {
    if (!(isObjectType(t) || isInterfaceType(t) || isInputObjectType(t))) continue;
    for (const f of Object.values(t.getFields())) {
      check(`${t.name}.${f.name}`, f.name, f.type, f.description);
      if ("args" in f) for (const a of f.args) check(`${t.name}.${f.name}(${a.name})`, a.name, a.type, a.description);
    }
  }
  return bad;
}

describe("schema lint (issue 22)", () => {
  it("every identifier argument and input field is an ID (no `nodeId: String!`)", () => {
    expect(identifierViolations()).toEqual([]);
  });

  it("every type, field, argument and enum value has a description", () => {
    expect(undescribed()).toEqual([]);
  });

  it("no description explains itself by a REST route: it says what the thing is (a compute pass-through names its path)", () => {
    const quoting = /\b(GET|POST|PUT|PATCH|DELETE) \/(v2|api)\//;
    const descriptions = types.flatMap((t) => [
      t.description ?? "",
      ...(isObjectType(t) || isInterfaceType(t) || isInputObjectType(t) ? Object.values(t.getFields()).map((f) => f.description ?? "") : []),
    ]);
    expect(descriptions.filter((d) => quoting.test(d))).toEqual([]);
  });

  it("one enum per vocabulary: no two enums hold the same values, and a field named after an enum is that enum", () => {
    const enums = types.filter(isEnumType);
    const byValues = new Map<string, string[]>();
    for (const e of enums) {
      const key = e.getValues().map((v) => v.name).sort().join(",");
      byValues.set(key, [...(byValues.get(key) ?? []), e.name]);
    }
    expect([...byValues.values()].filter((names) => names.length > 1)).toEqual([]);

    const enumNamed = new Map(enums.map((e) => [e.name[0].toLowerCase() + e.name.slice(1), e.name]));
    const bad: string[] = [];
    const check = (where: string, name: string, type: GraphQLType) => {
      const expected = enumNamed.get(name) ?? enumNamed.get(name.replace(/s$/, ""));
      if (expected && getNamedType(type).name !== expected) bad.push(`${where}: ${String(type)}, not ${expected}`);
    };
    for (const t of types) {
      if (!(isObjectType(t) || isInterfaceType(t) || isInputObjectType(t))) continue;
      for (const f of Object.values(t.getFields())) {
        check(`${t.name}.${f.name}`, f.name, f.type);
        if ("args" in f) for (const a of f.args) check(`${t.name}.${f.name}(${a.name})`, a.name, a.type);
      }
    }
    expect(bad).toEqual([]);
  });

  it("every number whose description states a unit carries it in its name (`sizeBytes`, `timeoutSeconds`) and the other way round, unless listed with why", () => {
    expect(unitViolations(types)).toEqual([]);
    const sample = buildSchema(`type Query {
      """The file's size, in bytes""" size: Int
      """The file's size, in bytes""" sizeBytes: Int
      """Seconds the URL stays valid""" url(validFor: Int, """Seconds the URL stays valid""" validFor2: Int): String
      """The load, in percent""" loadPercent: Float
      """Guest memory, in MB""" ramMb: Int
      """Where on the canvas, in pixels""" x: Int
      """Bytes of text, in bytes""" text: String
      """How long to wait""" waitSeconds: Int
    }`);
    expect(unitViolations(Object.values(sample.getTypeMap()))).toEqual([
      'Query.size: "The file\'s size, in bytes"',
      'Query.url(validFor2): "Seconds the URL stays valid"',
      'Query.waitSeconds: "How long to wait"',
    ]);
  });

  it("every collection of objects is a connection, unless it is bounded by nature (listed, with why)", () => {
    expect(collectionViolations()).toEqual([]);
  });

  it("every connection pages both ways and counts (also inside a result union)", () => {
    /** The connection a field answers: its type, or its result union's answer member. */
    const connectionOf = (type: GraphQLType) => {
      const answer = answerOf(type);
      return isObjectType(answer) && answer.name.endsWith("Connection") ? answer : undefined;
    };
    let connections = 0;
    for (const t of types) {
      if (!isObjectType(t)) continue;
      for (const f of Object.values(t.getFields())) {
        const connection = connectionOf(f.type);
        if (!connection) continue;
        connections++;
        expect(f.args.map((a) => a.name), `${t.name}.${f.name}`).toEqual(expect.arrayContaining(["first", "after", "last", "before"]));
        expect(Object.keys(connection.getFields()), connection.name).toEqual(expect.arrayContaining(["edges", "pageInfo", "totalCount"]));
      }
    }
    expect(connections).toBeGreaterThanOrEqual(18);
  });

  it("every mutation takes one argument, `input: <Mutation>Input!` (unless it takes none: listed, with why)", () => {
    expect(mutationInputViolations()).toEqual([]);
  });

  it("every mutation answers `<Mutation>Result!`, a union of `<Mutation>Payload` and errors", () => {
    expect(mutationResultViolations()).toEqual([]);
  });

  it("a result union holds the answer itself: a `…Success { data }` wrapper only for a scalar, a list or an interface", () => {
    expect(needlessWrappers()).toEqual([]);
  });

  it("a by-id lookup answers the entity or null (null for an unknown, malformed or other type's id); only refusals are typed errors", () => {
    expect(lookups().length).toBeGreaterThanOrEqual(11);
    expect(lookupViolations()).toEqual([]);
  });

  it("a read, stream or mutation lists only the errors it can raise: every typed error only where listed, with why", () => {
    expect(everyErrorViolations()).toEqual([]);
  });

  it("every error a result can be implements Error, whose `code` is a non-null enum", () => {
    expect(unionMembersOffError()).toEqual([]);
    const error = schema.getType("Error");
    const code = isInterfaceType(error) ? error.getFields().code : undefined;
    expect(code && isNonNullType(code.type) && isEnumType(code.type.ofType), `Error.code: ${String(code?.type)}`).toBe(true);
  });

  it("every entity, and every object type with an `id` unless listed with why, is a Node (a global id, found by node(id:))", () => {
    expect(nodeViolations()).toEqual([]);
    const node = schema.getType("Node");
    expect(isInterfaceType(node) && String(node.getFields().id.type)).toBe("ID!");
  });

  it("Query.node(id:) and Query.nodes(ids:) find any entity by its global id", () => {
    const { node, nodes } = schema.getQueryType()!.getFields();
    expect(node && `${node.args.map((a) => `${a.name}: ${String(a.type)}`).join()} → ${String(node.type)}`).toBe("id: ID! → Node");
    expect(nodes && `${nodes.args.map((a) => `${a.name}: ${String(a.type)}`).join()} → ${String(nodes.type)}`).toBe("ids: [ID!]! → [Node]!");
  });

  it("the allowlists name only fields that exist", () => {
    const unitExceptions = Object.keys(UNIT_NOT_IN_NAME).filter((coordinate) => !coordinate.startsWith("*."));
    for (const coordinate of [...Object.keys(BOUNDED_LISTS), ...Object.keys(NOT_OBJECT_IDS), ...unitExceptions, ...Object.keys(EVERY_ERROR)]) {
      const [type, field] = coordinate.split(".");
      const t = schema.getType(type);
      expect(t && (isObjectType(t) || isInterfaceType(t) || isInputObjectType(t)) ? t.getFields()[field] : undefined, coordinate).toBeDefined();
    }
    for (const name of Object.keys(NO_INPUT)) expect(schema.getMutationType()!.getFields()[name], `Mutation.${name}`).toBeDefined();
    for (const name of Object.keys(NOT_NODES)) {
      const t = schema.getType(name);
      expect(isObjectType(t) ? t.getFields().id : undefined, `${name}.id`).toBeDefined();
    }
  });
});
