import type { AppContext } from "../../platform/context.js";
import { columnCondition, type FilterField, type Term } from "../ontap/filter.js";

/**
 * Names of SVMs and volumes are resolved to their keys first (a small indexed query), so the rule query filters
 * on its own indexed svmUuid/volumeUuid columns instead of joining per row — the join made counts over 100,000
 * rules take seconds on SQLite.
 */
function keyedByName(name: string, keyColumn: string, find: (where: object) => Promise<{ uuid: string }[]>): FilterField {
  const field: FilterField = { type: "string", column: "name" };
  return {
    ...field,
    custom: async (terms: Term[]) => ({ [keyColumn]: { in: (await find(columnCondition(name, field, terms))).map((r) => r.uuid) } }),
  };
}

/** The rule fields ONTAP lets a client filter on, mapped onto the QuotaRule model. */
export function ruleFilterFields(ctx: AppContext): Record<string, FilterField> {
  const qtreeId: FilterField = { type: "int", column: "qtreeId" };
  return {
    uuid: { type: "string", column: "uuid" },
    type: { type: "string", column: "type" },
    "svm.uuid": { type: "string", column: "svmUuid" },
    "svm.name": keyedByName("svm.name", "svmUuid", (where) => ctx.db.svm.findMany({ where, select: { uuid: true } })),
    "volume.uuid": { type: "string", column: "volumeUuid" },
    "volume.name": keyedByName("volume.name", "volumeUuid", (where) => ctx.db.volume.findMany({ where, select: { uuid: true } })),
    "qtree.name": { type: "string", column: "qtreeName", nullable: true },
    "qtree.id": {
      ...qtreeId,
      // qtree ids live on qtrees: find the matching (volume, name) pairs first, with an indexed query.
      custom: async (terms: Term[]) => {
        const nullWanted = terms.some((t) => t.op === "null");
        const rest = terms.filter((t) => t.op !== "null");
        const pairs = rest.length
          ? await ctx.db.qtree.findMany({ where: columnCondition("qtree.id", qtreeId, rest), select: { volumeUuid: true, name: true } })
          : [];
        const or: object[] = pairs.map((p) => ({ volumeUuid: p.volumeUuid, qtreeName: p.name }));
        if (nullWanted) or.push({ qtreeName: null });
        return or.length ? { OR: or } : { uuid: { in: [] } };
      },
    },
    "users.name": { type: "string", column: "name", many: "users", nullable: true },
    "users.id": { type: "string", column: "userId", many: "users", nullable: true },
    "group.name": { type: "string", column: "groupName", nullable: true },
    "group.id": { type: "string", column: "groupId", nullable: true },
    user_mapping: { type: "boolean", column: "userMapping", nullable: true },
    "space.hard_limit": { type: "bigint", column: "spaceHardLimit", nullable: true },
    "space.soft_limit": { type: "bigint", column: "spaceSoftLimit", nullable: true },
    "files.hard_limit": { type: "bigint", column: "filesHardLimit", nullable: true },
    "files.soft_limit": { type: "bigint", column: "filesSoftLimit", nullable: true },
  };
}

/**
 * Sortable columns; `true` marks one a rule may leave unset (no limit, no group, no qtree, not a user rule). Unset
 * sorts as larger than any value, on both databases (SQLite's own order puts NULL first, PostgreSQL's last): an
 * unlimited rule comes after every limit.
 */
const COLUMN_ORDER: Record<string, [column: string, nullable: boolean]> = {
  uuid: ["uuid", false],
  type: ["type", false],
  "svm.uuid": ["svmUuid", false],
  "volume.uuid": ["volumeUuid", false],
  "qtree.name": ["qtreeName", true],
  "group.name": ["groupName", true],
  "group.id": ["groupId", true],
  user_mapping: ["userMapping", true],
  "space.hard_limit": ["spaceHardLimit", true],
  "space.soft_limit": ["spaceSoftLimit", true],
  "files.hard_limit": ["filesHardLimit", true],
  "files.soft_limit": ["filesSoftLimit", true],
};

export const RULE_SORTABLE = new Set([...Object.keys(COLUMN_ORDER), "svm.name", "volume.name"]);

export function ruleOrder(field: string, dir: "asc" | "desc"): object {
  if (field === "svm.name") return { volume: { svm: { name: dir } } };
  if (field === "volume.name") return { volume: { name: dir } };
  const [column, nullable] = COLUMN_ORDER[field];
  return { [column]: nullable ? { sort: dir, nulls: dir === "asc" ? "last" : "first" } : dir };
}

/** How both faces order rule pages (REST `order_by`, GraphQL `orderBy`): the fields above, then the key. */
export const RULE_ORDER = { keyColumn: "uuid", orderFor: ruleOrder };
