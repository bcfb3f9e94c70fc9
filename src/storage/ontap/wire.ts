import type { z } from "zod";
import { jsonSchemaOf, type JsonSchema } from "../../platform/http/openapi.js";
import { fieldNames, inTermsOf, type FieldNames } from "../core/input.js";
import { parseDecimalInteger } from "../../platform/int64.js";
import { expandDottedKeys, rejectUnknown, type Shape } from "./body.js";

/**
 * How an ONTAP request body maps onto an operation's domain input. Only wire translation happens here: nested
 * JSON or Ansible's flat dotted keys, numbers and booleans sent as strings ("1024", "on", "-" for unlimited),
 * snake_case names, unknown keys refused. Values the wire cannot read are handed on as they are, so the
 * operation's schema reports them — in this face's field names (`nameOf`).
 */
type Read = "text" | "integer" | "int" | "limit" | "boolean";

/** wire path → [domain path, how the wire value is read]; a path under an array field names a field of each element. */
export type WireFields = Record<string, [domain: string, read?: Read]>;

const READ: Record<Read, (v: unknown) => unknown> = {
  text: (v) => (typeof v === "number" && Number.isFinite(v) ? String(v) : v),
  integer: (v) => {
    if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
    return (typeof v === "string" ? parseDecimalInteger(v.trim()) : undefined) ?? v; // the schema checks the range
  },
  /** A small integer (a JavaScript number). */
  int: (v) => {
    const n = READ.integer(v);
    return typeof n === "bigint" && n >= Number.MIN_SAFE_INTEGER && n <= Number.MAX_SAFE_INTEGER ? Number(n) : v;
  },
  limit: (v) => (v === "-" ? null : READ.integer(v)),
  boolean: (v) => {
    if (typeof v === "string" && /^(true|on)$/i.test(v)) return true;
    if (typeof v === "string" && /^(false|off)$/i.test(v)) return false;
    return v;
  },
};

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === "object" && !Array.isArray(v);

export class WireForm {
  private shape: Shape = {};
  /** The face's name of a domain path, for error targets and messages. */
  readonly nameOf: FieldNames;

  constructor(
    private fields: WireFields,
    private arrays: string[] = [],
    /** The operation's input schema (its field rules document the body; the operation parses with it). */
    private contract?: z.ZodType,
  ) {
    const rename: Record<string, string> = {};
    for (const [wire, [domain]] of Object.entries(fields)) {
      this.addToShape(wire.split("."));
      rename[domain] = wire;
      // Objects along the way keep their names (svm → svm, group → group).
      const [wireHead, domainHead] = [wire.split(".")[0], domain.split(".")[0]];
      if (domain.includes(".")) rename[domainHead] ??= wireHead;
    }
    this.nameOf = fieldNames(rename);
  }

  private addToShape(parts: string[]) {
    const [head, ...rest] = parts;
    if (!rest.length) {
      this.shape[head] = true;
      return;
    }
    if (this.arrays.includes(head)) {
      const element = ((this.shape[head] as [Shape] | undefined) ??= [{}])[0];
      element[rest.join(".")] = true; // one level is all ONTAP bodies nest under an array
      return;
    }
    let node = (this.shape[head] ??= {}) as Shape;
    for (const p of rest.slice(0, -1)) node = (node[p] ??= {}) as Shape;
    node[rest.at(-1)!] = true;
  }

  /** The body as the operation's input (unvalidated: the operation's schema checks it). */
  toDomain(raw: unknown): Obj {
    const body = expandDottedKeys(raw, this.arrays);
    rejectUnknown(body, this.shape);
    const out: Obj = {};
    for (const [wire, [domain, read]] of Object.entries(this.fields)) {
      const [head, ...rest] = wire.split(".");
      const convert = read ? READ[read] : (v: unknown) => v;
      if (this.arrays.includes(head) && rest.length) {
        const list = body[head] as Obj[] | undefined;
        if (!list) continue;
        const [domainHead, domainLeaf] = domain.split(".");
        const items = ((out[domainHead] as Obj[] | undefined) ??= list.map((): Obj => ({})));
        list.forEach((item, i) => item[rest[0]] !== undefined && (items[i][domainLeaf] = convert(item[rest[0]])));
        continue;
      }
      const { found, value, parentFound } = lookup(body, [head, ...rest]);
      const domainParts = domain.split(".");
      // An object the client sent stays an object, even empty (`group: {}` is a group without name or id).
      if (parentFound && domainParts.length > 1) out[domainParts[0]] ??= {};
      if (found) setAt(out, domainParts, convert(value));
    }
    return out;
  }

  /**
   * The JSON Schema of the body (OpenAPI): the nested form of the wire fields, each typed by how the wire reads
   * it, text fields with the contract's rules (enums, patterns). Flat dotted keys are accepted as well.
   */
  jsonSchema(): JsonSchema {
    const domain = this.contract ? jsonSchemaOf(this.contract) : {};
    const root: JsonSchema = { type: "object", additionalProperties: false, properties: {}, description: 'Nested JSON, or flat dotted keys as Ansible sends them ("svm.name": "vs0").' };
    for (const [wire, [domainPath, read = "text"]] of Object.entries(this.fields)) {
      const [head, ...rest] = wire.split(".");
      let node = root;
      if (this.arrays.includes(head)) {
        const list = ((node.properties as Record<string, JsonSchema>)[head] ??= { type: "array", items: { type: "object", additionalProperties: false, properties: {} } });
        node = list.items as JsonSchema;
      } else {
        for (const p of [head, ...rest].slice(0, -1)) node = (node.properties as Record<string, JsonSchema>)[p] ??= { type: "object", additionalProperties: false, properties: {} };
      }
      (node.properties as Record<string, JsonSchema>)[wire.split(".").at(-1)!] = wireValueSchema(read, domainField(domain, domainPath.split(".")));
    }
    return root;
  }

  /** Runs the operation; its errors name this face's fields. */
  run<T>(op: () => Promise<T>): Promise<T> {
    return inTermsOf(this.nameOf, op);
  }
}

/** The JSON Schema of a domain field (through arrays and optional wrappers), or {} when the contract has none. */
function domainField(schema: JsonSchema, path: string[]): JsonSchema {
  let node: JsonSchema | undefined = schema;
  for (const part of path) {
    const candidates: JsonSchema[] = [node, ...(((node?.anyOf ?? node?.oneOf ?? []) as JsonSchema[]))];
    const holder = candidates.find((c) => (c?.properties as Obj | undefined)?.[part] || (c?.items as JsonSchema | undefined)?.properties);
    const owner = (holder?.items as JsonSchema | undefined)?.properties ? (holder!.items as JsonSchema) : holder;
    node = (owner?.properties as Record<string, JsonSchema> | undefined)?.[part];
    if (!node) return {};
  }
  return node;
}

const INTEGER_TEXT = { type: "string", pattern: "^-?\\d{1,19}$" };

/** What the wire accepts for a field read as `read`; text keeps the contract's rules. */
function wireValueSchema(read: Read, domain: JsonSchema): JsonSchema {
  const described = typeof domain.description === "string" ? { description: domain.description } : {};
  switch (read) {
    case "integer":
    case "int":
      return { ...described, anyOf: [{ type: "integer" }, INTEGER_TEXT] };
    case "limit":
      return { description: 'A limit: an integer, or -1 / "-" for unlimited.', anyOf: [{ type: "integer" }, INTEGER_TEXT, { const: "-" }, { type: "null" }] };
    case "boolean":
      return { ...described, anyOf: [{ type: "boolean" }, { enum: ["true", "false", "on", "off"] }] };
    default:
      return domain.type || domain.enum || domain.anyOf ? domain : { ...described, type: "string" };
  }
}

function lookup(body: Obj, parts: string[]): { found: boolean; value: unknown; parentFound: boolean } {
  let node: unknown = body;
  for (const p of parts.slice(0, -1)) {
    if (!isObj(node) || (node as Obj)[p] === undefined) return { found: false, value: undefined, parentFound: false };
    node = (node as Obj)[p];
  }
  const value = isObj(node) ? node[parts.at(-1)!] : undefined;
  return { found: value !== undefined, value, parentFound: isObj(node) };
}

function setAt(target: Obj, parts: string[], value: unknown) {
  let node = target;
  for (const p of parts.slice(0, -1)) node = (node[p] ??= {}) as Obj;
  node[parts.at(-1)!] = value;
}
