import { getDatamodel } from "../../generated/pothos-types.js";
import type { AppContext } from "../../platform/context.js";

/**
 * The objects of typed events are the event's, not the database's at delivery: a deleted node or link is the node
 * or link as it was, and every event shows the object as it was when the event happened, even when it is delivered
 * (replayed) later. What an event carries (a node's row; a link's row, its endpoints and the nodes at its ends) is
 * answered from it. A relation it does not carry (a node's links, a project's nodes) is read from the database when
 * the subscription selects it, in one statement per relation and event, and is empty when the object no longer
 * exists — never an error that would null the whole event.
 */

type Model = "Node" | "Link" | "LinkEndpoint" | "Project" | "Drawing";
type Query = { include?: Record<string, unknown>; select?: Record<string, unknown> } & Record<string, unknown>;
type Row = Record<string, unknown>;

interface FieldInfo {
  isList: boolean;
  type: string;
  relation: boolean;
}
const models = getDatamodel().datamodel.models as unknown as Record<string, { fields: { name: string; kind: string; type: string; isList: boolean }[] }>;
const fieldsOf = new Map<string, Map<string, FieldInfo>>(
  Object.entries(models).map(([name, m]) => [name, new Map(m.fields.map((f) => [f.name, { isList: f.isList, type: f.type, relation: f.kind === "object" }]))]),
);

/** The relations (and `_count`) a Prisma query asks beyond the row's columns. */
function relationsAsked(model: string, query: unknown): [string, unknown][] {
  if (!query || typeof query !== "object") return [];
  const q = query as Query;
  const asked = { ...(q.include ?? {}), ...(q.select ?? {}) };
  const fields = fieldsOf.get(model)!;
  return Object.entries(asked).filter(([name, v]) => v && (name === "_count" || fields.get(name)?.relation));
}

const whereOf = (model: Model, row: Row) =>
  model === "LinkEndpoint" ? { linkId_position: { linkId: row.linkId, position: row.position } } : { id: row.id };

/** What a relation of an object that no longer exists holds: nothing. */
function emptyRelation(model: string, name: string, asked: unknown): unknown {
  if (name === "_count") {
    const counted = ((asked as { select?: Record<string, unknown> }).select ?? {}) as Record<string, unknown>;
    return Object.fromEntries(Object.keys(counted).map((k) => [k, 0]));
  }
  return fieldsOf.get(model)!.get(name)!.isList ? [] : null;
}

/**
 * `row` (the event's object, with what the event carries attached under the relation names) completed with what
 * the GraphQL selection's Prisma `query` asks and the event does not carry.
 */
export async function eventObject<T>(ctx: AppContext, model: Model, query: unknown, row: Row): Promise<T> {
  const asked = relationsAsked(model, query);
  const out: Row = { ...row };
  const missing: Record<string, unknown> = {};
  for (const [name, sub] of asked) {
    const carried = row[name];
    if (carried === undefined) {
      missing[name] = sub;
      continue;
    }
    const target = fieldsOf.get(model)!.get(name)?.type as Model | undefined;
    if (!target || carried === null) continue;
    out[name] = Array.isArray(carried)
      ? await Promise.all(carried.map((c) => eventObject(ctx, target, sub, c as Row)))
      : await eventObject(ctx, target, sub, carried as Row);
  }
  if (Object.keys(missing).length) {
    const delegate = (ctx.db as unknown as Record<string, { findUnique(args: object): Promise<Row | null> }>)[model[0].toLowerCase() + model.slice(1)];
    const now = await delegate.findUnique({ where: whereOf(model, row), select: missing });
    for (const name of Object.keys(missing)) out[name] = now ? now[name] : emptyRelation(model, name, missing[name]);
  }
  return out as T;
}
