import type { AppContext } from "../../platform/context.js";
import type { EnforcedQuota } from "../../generated/prisma-sqlite/client.js";
import { InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { isEventId } from "../../platform/events.js";
import { batchLoad } from "../../platform/graphql/batch-load.js";
import { builder, usableQuery } from "../../platform/graphql/builder.js";
import { lookupDescription, orNull } from "../../platform/graphql/lookup.js";
import { domainId, globalId } from "../../platform/graphql/global-id.js";
import { termsCondition, type Term } from "../ontap/filter.js";
import { pageOrder } from "../ontap/collection.js";
import { checkOrderLength } from "../ontap/query.js";
import { quotaTopic, type QuotaChange } from "../core/events.js";
import { SvmSelector, svmSelection } from "../svms/graphql.js";
import { volumeUuidOf } from "../volumes/graphql.js";
import { qtreeIdOf, qtreeIds, userEntries } from "./serialize.js";
import { ruleFilterFields, RULE_ORDER, RULE_SORTABLE } from "./filters.js";
import { findRulePage } from "./page.js";

export const QuotaRuleType = builder.enumType("QuotaRuleType", {
  description: "Whose use of a volume (or qtree) a quota rule limits",
  values: {
    USER: { description: "The space and files each of the rule's users owns" },
    GROUP: { description: "The space and files the rule's group owns" },
    TREE: { description: "The space and files of a whole qtree, whoever owns them" },
  } as const,
});

/**
 * What the limits mean, for the rule, its report entry and the limits input, by GraphQL name: space limits carry
 * their unit (ONTAP's `space.hard_limit`, in bytes), file limits are counts.
 */
export const LIMIT_DOCS = {
  spaceHardLimitBytes: "Space, in bytes (whole KiB): writes that would go beyond it fail; null = unlimited",
  spaceSoftLimitBytes: "Space, in bytes (whole KiB): use beyond it is reported, not refused; null = unlimited",
  filesHardLimit: "Files (and directories): creating one beyond it fails; null = unlimited",
  filesSoftLimit: "Files (and directories): more than it are reported, not refused; null = unlimited",
} as const;

/** The rule fields whose GraphQL name differs from the domain's: the space limits, which name their unit. */
export const GRAPHQL_LIMIT_NAMES: Record<string, string> = { spaceHardLimit: "spaceHardLimitBytes", spaceSoftLimit: "spaceSoftLimitBytes" };

const QuotaUser = builder.objectRef<{ name?: string; id?: string }>("QuotaUser").implement({
  description: "A user target: a name or a numeric id (an empty name is the default rule)",
  fields: (t) => ({
    name: t.string({ nullable: true, description: "The user's name (\"\" for the default rule, which limits every user)", resolve: (u) => u.name ?? null }),
    id: t.string({ nullable: true, description: "The user's UNIX id (or Windows SID)", resolve: (u) => u.id ?? null }),
  }),
});
const QuotaGroup = builder.objectRef<{ name: string | null; id: string | null }>("QuotaGroup").implement({
  description: "A group target: a name or a numeric id (an empty name is the default rule)",
  fields: (t) => ({
    name: t.exposeString("name", { nullable: true, description: "The group's name (\"\" for the default rule, which limits every group)" }),
    id: t.exposeString("id", { nullable: true, description: "The group's UNIX id" }),
  }),
});

type NamedQtree = { name: string; volumeUuid: string; qtreeId: number | null };
/** As ONTAP shows it (name and number), with the qtree itself; no `id`: the number repeats across volumes. */
const QuotaQtree = builder.objectRef<NamedQtree>("QuotaQtree").implement({
  description: "The qtree a rule names: a tree rule's target, a user or group rule's scope",
  fields: (t) => ({
    name: t.exposeString("name", { description: "The qtree's name; \"\" for the default tree rule" }),
    qtreeId: t.exposeInt("qtreeId", { nullable: true, description: "The qtree's number in its volume; null for the default tree rule, which names no qtree" }),
    qtree: t.prismaField({
      type: "Qtree",
      nullable: true,
      description: "The qtree itself; null for the default tree rule",
      resolve: async (query, q, _a, ctx) => {
        if (q.qtreeId === null) return null;
        const load = (keys: string[]) => ctx.db.qtree.findMany({ ...usableQuery(query), where: { key: { in: keys } } });
        const [qtree] = await batchLoad(ctx, "QuotaQtree.qtree", query, `${q.volumeUuid}/${q.qtreeId}`, load, (r) => r.key);
        return qtree ?? null;
      },
    }),
  }),
});

/**
 * A rule's qtree id: the page loader reads it with the page; rules Prisma loaded for a connection share one lookup
 * for the page (`lazyQtreeIds`), made when the first of them is asked; a single rule looks its own up.
 */
const QTREE_IDS = Symbol("qtree ids");
type RuleQtree = { volumeUuid: string; qtreeName: string | null; qtreeId?: number | null; [QTREE_IDS]?: () => Promise<Map<string, number>> };

function lazyQtreeIds<R extends RuleQtree>(ctx: AppContext, rows: R[]): R[] {
  let ids: Promise<Map<string, number>> | undefined;
  const load = () => (ids ??= qtreeIds(ctx, rows));
  for (const r of rows) r[QTREE_IDS] = load;
  return rows;
}

async function ruleQtree(ctx: AppContext, r: RuleQtree) {
  if (r.qtreeName === null) return null;
  const at = { name: r.qtreeName, volumeUuid: r.volumeUuid };
  if (r.qtreeId !== undefined) return { ...at, qtreeId: r.qtreeId };
  const ids = await (r[QTREE_IDS] ?? (() => qtreeIds(ctx, [r])))();
  return { ...at, qtreeId: qtreeIdOf(ids, r) ?? null };
}

/** A rule id argument (its global id, or its uuid) as the operations take it. */
export const ruleUuidOf = (id: string | number) => domainId(id, "QuotaRule", "id");

export const QuotaRuleRef = builder.prismaNode("QuotaRule", {
  nullable: true, // node(id:) of a deleted one answers null, not an error
  description: "A limit on the space and files a user, a group or a qtree may use in a volume (enforced while the volume's quota is on)",
  id: { field: "uuid", description: "The rule's global id: use it for `node(id:)`, as a cache key and in arguments" },
  fields: (t) => ({
    uuid: t.exposeID("uuid", { description: "The rule's ONTAP uuid: the `uuid` of the ONTAP REST API" }),
    type: t.field({ type: QuotaRuleType, description: "Whose use the rule limits", resolve: (r) => r.type.toUpperCase() as "USER" }),
    svm: t.prismaField({
      type: "Svm",
      description: "The SVM of the rule's volume",
      // One batched read for a page of rules (the page loader reads no SVM row).
      resolve: async (query, r, _a, ctx) => {
        const load = (uuids: string[]) => ctx.db.svm.findMany({ ...usableQuery(query), where: { uuid: { in: uuids } } });
        const [svm] = await batchLoad(ctx, "QuotaRule.svm", query, r.svmUuid, load, (s) => s.uuid);
        if (!svm) throw new NotFoundError(`SVM ${r.svmUuid} does not exist.`);
        return svm;
      },
    }),
    volume: t.relation("volume", { description: "The volume the rule limits" }),
    qtreeName: t.exposeString("qtreeName", { nullable: true, description: "null for a volume-level user or group rule; \"\" for the default tree rule" }),
    qtree: t.field({
      type: QuotaQtree,
      nullable: true,
      description: "The qtree the rule names (its `qtree` is the Qtree); null for a volume-level user or group rule",
      resolve: (r, _a, ctx) => ruleQtree(ctx, r),
    }),
    users: t.field({
      type: [QuotaUser],
      description: "A user rule's users (empty for other rules)",
      select: { users: { orderBy: { position: "asc" } } },
      resolve: (r) => userEntries(r.users),
    }),
    group: t.field({ type: QuotaGroup, nullable: true, description: "A group rule's group (null for other rules)", resolve: (r) => (r.type === "group" ? { name: r.groupName, id: r.groupId } : null) }),
    userMapping: t.exposeBoolean("userMapping", { nullable: true, description: "User rules: whether a UNIX user and the Windows user mapped to it share one quota (null for other rules)" }),
    spaceHardLimitBytes: t.expose("spaceHardLimit", { type: "BigInt", nullable: true, description: LIMIT_DOCS.spaceHardLimitBytes }),
    spaceSoftLimitBytes: t.expose("spaceSoftLimit", { type: "BigInt", nullable: true, description: LIMIT_DOCS.spaceSoftLimitBytes }),
    filesHardLimit: t.expose("filesHardLimit", { type: "BigInt", nullable: true, description: LIMIT_DOCS.filesHardLimit }),
    filesSoftLimit: t.expose("filesSoftLimit", { type: "BigInt", nullable: true, description: LIMIT_DOCS.filesSoftLimit }),
  }),
});

// ---- typed filters, translated through the same field map as the ONTAP query language
const IS_NULL = "true: only where the field has no value (unlimited, or not this rule type's); false: only where it has one";
const StringFilter = builder.inputType("StringFilter", {
  description: "Conditions on a text field; operators are ANDed, use QuotaRuleFilter.or for alternatives",
  fields: (t) => ({
    eq: t.string({ description: "Equal to this" }),
    in: t.stringList({ description: "Equal to one of these" }),
    startsWith: t.string({ description: "Starting with this" }),
    isNull: t.boolean({ description: IS_NULL }),
  }),
});
const IntFilter = builder.inputType("IntFilter", {
  description: "Operators are ANDed; use QuotaRuleFilter.or for alternatives",
  fields: (t) => ({
    eq: t.int({ description: "Equal to this" }),
    in: t.intList({ description: "Equal to one of these" }),
    lt: t.int({ description: "Less than this" }),
    lte: t.int({ description: "At most this" }),
    gt: t.int({ description: "Greater than this" }),
    gte: t.int({ description: "At least this" }),
    isNull: t.boolean({ description: IS_NULL }),
  }),
});
const BooleanFilter = builder.inputType("BooleanFilter", {
  description: "Conditions on a yes/no field",
  fields: (t) => ({ eq: t.boolean({ description: "Equal to this" }), isNull: t.boolean({ description: IS_NULL }) }),
});
const BigIntFilter = builder.inputType("BigIntFilter", {
  description: "Operators are ANDed; use QuotaRuleFilter.or for alternatives",
  fields: (t) => ({
    eq: t.field({ type: "BigInt", description: "Equal to this" }),
    lt: t.field({ type: "BigInt", description: "Less than this" }),
    lte: t.field({ type: "BigInt", description: "At most this" }),
    gt: t.field({ type: "BigInt", description: "Greater than this" }),
    gte: t.field({ type: "BigInt", description: "At least this" }),
    isNull: t.boolean({ description: IS_NULL }),
  }),
});
type StrF = { eq?: string | null; in?: string[] | null; startsWith?: string | null; isNull?: boolean | null };
type NumF = { eq?: bigint | number | null; in?: number[] | null; lt?: bigint | number | null; lte?: bigint | number | null; gt?: bigint | number | null; gte?: bigint | number | null; isNull?: boolean | null };
type BoolF = { eq?: boolean | null; isNull?: boolean | null };
interface RuleFilter {
  uuid?: StrF | null;
  svmName?: StrF | null;
  svmUuid?: StrF | null;
  volumeName?: StrF | null;
  volumeUuid?: StrF | null;
  type?: ("USER" | "GROUP" | "TREE")[] | null;
  qtreeName?: StrF | null;
  userName?: StrF | null;
  userId?: StrF | null;
  groupName?: StrF | null;
  groupId?: StrF | null;
  qtreeId?: NumF | null;
  userMapping?: BoolF | null;
  spaceHardLimitBytes?: NumF | null;
  spaceSoftLimitBytes?: NumF | null;
  filesHardLimit?: NumF | null;
  filesSoftLimit?: NumF | null;
  or?: RuleFilter[] | null;
}
const QuotaRuleFilter = builder.inputRef<RuleFilter>("QuotaRuleFilter").implement({
  description: "Quota rules matching every field given (the same conditions the ONTAP query parameters express)",
  fields: (t) => ({
    uuid: t.field({ type: StringFilter, description: "The rule's uuid" }),
    svmName: t.field({ type: StringFilter, description: "The name of the rule's SVM" }),
    svmUuid: t.field({ type: StringFilter, description: "The uuid of the rule's SVM" }),
    volumeName: t.field({ type: StringFilter, description: "The name of the rule's volume" }),
    volumeUuid: t.field({ type: StringFilter, description: "The uuid of the rule's volume" }),
    type: t.field({ type: [QuotaRuleType], description: "Rules of one of these types" }),
    qtreeName: t.field({ type: StringFilter, description: "The name of the qtree the rule names" }),
    userName: t.field({ type: StringFilter, description: "matches when any user of the rule matches" }),
    userId: t.field({ type: StringFilter, description: "matches when any user id of the rule matches" }),
    groupName: t.field({ type: StringFilter, description: "The name of a group rule's group" }),
    groupId: t.field({ type: StringFilter, description: "The id of a group rule's group" }),
    qtreeId: t.field({ type: IntFilter, description: "the id of the qtree the rule names" }),
    userMapping: t.field({ type: BooleanFilter, description: "user rules only: other rules have none (isNull)" }),
    spaceHardLimitBytes: t.field({ type: BigIntFilter, description: "The space hard limit, in bytes" }),
    spaceSoftLimitBytes: t.field({ type: BigIntFilter, description: "The space soft limit, in bytes" }),
    filesHardLimit: t.field({ type: BigIntFilter, description: "The files hard limit" }),
    filesSoftLimit: t.field({ type: BigIntFilter, description: "The files soft limit" }),
    or: t.field({ type: [QuotaRuleFilter], description: "alternatives, each ANDed with the other fields" }),
  }),
});

const FIELD_OF: Record<string, string> = {
  uuid: "uuid", groupId: "group.id", qtreeId: "qtree.id", userMapping: "user_mapping",
  svmName: "svm.name", svmUuid: "svm.uuid", volumeName: "volume.name", volumeUuid: "volume.uuid", qtreeName: "qtree.name",
  userName: "users.name", userId: "users.id", groupName: "group.name", spaceHardLimitBytes: "space.hard_limit",
  spaceSoftLimitBytes: "space.soft_limit", filesHardLimit: "files.hard_limit", filesSoftLimit: "files.soft_limit",
};

/** Each operator becomes a term of the ONTAP filter machinery, so both faces filter identically. */
function termsOf(f: Omit<StrF, "in"> & NumF & BoolF & { in?: (string | number)[] | null }): Term[][] {
  const out: Term[][] = [];
  if (f.eq != null) out.push([{ op: "eq", value: String(f.eq) }]);
  if (f.in?.length) out.push(f.in.map((v) => ({ op: "eq", value: String(v) })));
  if (f.startsWith != null) out.push([{ op: "like", parts: [f.startsWith, ""] }]);
  for (const op of ["lt", "lte", "gt", "gte"] as const) if (f[op] != null) out.push([{ op, value: String(f[op]) }]);
  if (f.isNull != null) out.push([{ op: f.isNull ? "null" : "notNull" }]);
  return out;
}

export async function ruleWhere(ctx: AppContext, filter: RuleFilter | null | undefined): Promise<object> {
  if (!filter) return {};
  const fields = ruleFilterFields(ctx);
  const and: object[] = [];
  if (filter.type?.length) and.push({ type: { in: filter.type.map((t) => t.toLowerCase()) } });
  for (const [key, name] of Object.entries(FIELD_OF)) {
    const f = filter[key as keyof RuleFilter] as Parameters<typeof termsOf>[0] | null | undefined;
    if (f) for (const terms of termsOf(f)) and.push(await termsCondition(name, fields[name], terms));
  }
  if (filter.or?.length) and.push({ OR: await Promise.all(filter.or.map((o) => ruleWhere(ctx, o))) });
  return { AND: and };
}

/**
 * The page loader (one statement for the page) returns every scalar of a rule and its users; a selection that
 * reaches the volume (whose fields the loader does not all read) keeps Prisma's nested query.
 */
function pageCovers(query: { include?: Record<string, unknown>; select?: Record<string, unknown> }): boolean {
  return !query.select && Object.keys(query.include ?? {}).every((k) => k === "users");
}

const pageArgs = ({ take, skip, cursor }: { take?: number; skip?: number; cursor?: object }) => ({ take, skip, cursor });

// ---- ordering: REST's order_by fields, in the same order (the connection's cursor is the rule, so pages stay put)
const OrderDirection = builder.enumType("OrderDirection", {
  description: "Which way a sort goes",
  values: { ASC: { description: "Smallest (or A) first" }, DESC: { description: "Largest (or Z) first" } } as const,
});
const QuotaRuleOrderField = builder.enumType("QuotaRuleOrderField", {
  description: "The rule fields quota rules can be sorted by (named as in the ONTAP API: space.hard_limit …)",
  values: Object.fromEntries([...RULE_SORTABLE].map((f) => [f.replace(/\./g, "_").toUpperCase(), { value: f, description: `By the rule's ${f.replace(/[._]/g, " ")} (\`${f}\`)` }])),
});
const QuotaRuleOrder = builder.inputType("QuotaRuleOrder", {
  description: "One sort key of a list of quota rules",
  fields: (t) => ({
    field: t.field({ type: QuotaRuleOrderField, required: true, description: "The field to sort by" }),
    direction: t.field({ type: OrderDirection, defaultValue: "ASC", description: "Which way" }),
  }),
});

function ruleOrderBy(keys: { field: string; direction?: "ASC" | "DESC" | null }[] | null | undefined): object[] {
  checkOrderLength(keys?.length ?? 0, RULE_SORTABLE, "orderBy");
  return pageOrder(RULE_ORDER, (keys ?? []).map((k) => ({ field: k.field, dir: k.direction === "DESC" ? "desc" : "asc" })));
}

builder.queryFields((t) => ({
  quotaRule: t.prismaField({
    type: "QuotaRule",
    nullable: true,
    description: lookupDescription("One quota rule"),
    args: { id: t.arg.id({ required: true, description: "The rule's id (its global id, or its uuid)" }) },
    resolve: (query, _r, args, ctx) => orNull(() => ctx.db.quotaRule.findUnique({ ...query, where: { uuid: ruleUuidOf(args.id) } })),
  }),
  quotaRules: t.prismaConnection(
    {
      type: "QuotaRule",
      cursor: "uuid",
      description: "Quota rules across every volume, filtered and sorted (by uuid unless `orderBy` says otherwise)",
      args: {
        filter: t.arg({ type: QuotaRuleFilter, description: "Only the rules that match" }),
        orderBy: t.arg({ type: [QuotaRuleOrder], description: "Sort keys, most significant first; ties by uuid" }),
      },
      resolve: async (query, _r, args, ctx) => {
        const orderBy = ruleOrderBy(args.orderBy);
        const where = await ruleWhere(ctx, args.filter);
        if (pageCovers(query)) return findRulePage(ctx, { ...pageArgs(query), where, orderBy }) as never;
        return lazyQtreeIds(ctx, await ctx.db.quotaRule.findMany({ ...query, where, orderBy }));
      },
      totalCount: async (_r, args, ctx) => ctx.db.quotaRule.count({ where: await ruleWhere(ctx, args.filter) }),
    },
    {},
  ),
  quotaReports: t.prismaConnection(
    {
      type: "EnforcedQuota",
      cursor: "ruleUuid",
      description: "The limits currently enforced in the file system of a volume, by report index",
      args: { volumeId: t.arg.id({ required: true, description: "The volume (its global id, or its uuid)" }) },
      resolve: (query, _r, args, ctx) =>
        ctx.db.enforcedQuota.findMany({ ...usableQuery(query), where: { volumeUuid: volumeUuidOf(args.volumeId, "volumeId") }, orderBy: { reportIndex: "asc" } }),
      totalCount: (_r, args, ctx) => ctx.db.enforcedQuota.count({ where: { volumeUuid: volumeUuidOf(args.volumeId, "volumeId") } }),
    },
    {},
  ),
}));

// One entry per rule: the rule's uuid is the entry's identity (its index shifts as rules come and go).
builder.prismaNode("EnforcedQuota", {
  nullable: true, // node(id:) of a deleted one answers null, not an error
  name: "QuotaReport",
  description: "A limit the file system of a volume enforces now (as of quota on or the last resize), from one quota rule",
  id: { field: "ruleUuid", description: "The entry's global id: use it for `node(id:)` and as a cache key" },
  fields: (t) => ({
    index: t.exposeInt("reportIndex", { description: "The entry's index in the volume's report" }),
    ruleUuid: t.exposeID("ruleUuid", { description: "The uuid of the rule the limit comes from" }),
    rule: t.prismaField({
      type: "QuotaRule",
      nullable: true,
      description: "The rule the limit comes from, as it is now (null once deleted: the entry stays until the next resize)",
      resolve: async (query, e: EnforcedQuota, _a, ctx) => {
        const load = (uuids: string[]) => ctx.db.quotaRule.findMany({ ...usableQuery(query), where: { uuid: { in: uuids } } });
        const [rule] = await batchLoad(ctx, "QuotaReport.rule", query, e.ruleUuid, load, (r) => r.uuid);
        return rule ?? null;
      },
    }),
    type: t.field({ type: QuotaRuleType, description: "Whose use is limited", resolve: (r) => r.type.toUpperCase() as "USER" }),
    qtreeName: t.exposeString("qtreeName", { nullable: true, description: "The qtree the limit applies to (null: the whole volume)" }),
    users: t.field({ type: [QuotaUser], description: "The users limited (user rules)", resolve: (r) => JSON.parse(r.usersJson) }),
    group: t.field({ type: QuotaGroup, nullable: true, description: "The group limited (group rules)", resolve: (r) => (r.type === "group" ? { name: r.groupName, id: r.groupId } : null) }),
    spaceHardLimitBytes: t.expose("spaceHardLimit", { type: "BigInt", nullable: true, description: LIMIT_DOCS.spaceHardLimitBytes }),
    spaceSoftLimitBytes: t.expose("spaceSoftLimit", { type: "BigInt", nullable: true, description: LIMIT_DOCS.spaceSoftLimitBytes }),
    filesHardLimit: t.expose("filesHardLimit", { type: "BigInt", nullable: true, description: LIMIT_DOCS.filesHardLimit }),
    filesSoftLimit: t.expose("filesSoftLimit", { type: "BigInt", nullable: true, description: LIMIT_DOCS.filesSoftLimit }),
    volume: t.relation("volume", { description: "The volume the limit is enforced in" }),
  }),
});

// ---- subscription
const QuotaChangeKind = builder.enumType("QuotaChangeKind", {
  description: "What changed in a volume's quotas",
  values: {
    RULE_CREATED: { description: "A quota rule was created" },
    RULE_UPDATED: { description: "A quota rule's limits or user mapping changed" },
    RULE_DELETED: { description: "A quota rule was deleted" },
    VOLUME_QUOTA_CHANGED: { description: "The volume's quota was turned on or off, or its enforcement changed state" },
  } as const,
});

interface QuotaChangeEvent extends QuotaChange {
  cursor: string;
}
const QuotaChangeRef = builder.objectRef<QuotaChangeEvent>("QuotaChange").implement({
  description: "A rule or volume-quota change; pass `cursor` as `after` to resume after a reconnect",
  fields: (t) => ({
    cursor: t.exposeString("cursor", { description: "Pass as `after` to resume after this change" }),
    kind: t.field({ type: QuotaChangeKind, description: "What changed", resolve: (e) => e.kind }),
    svmUuid: t.exposeID("svmUuid", { description: "The uuid of the volume's SVM" }),
    volumeUuid: t.exposeID("volumeUuid", { description: "The uuid of the volume whose quotas changed" }),
    ruleUuid: t.exposeID("ruleUuid", { nullable: true, description: "The uuid of the rule that changed (null for VOLUME_QUOTA_CHANGED)" }),
    ruleId: t.id({
      nullable: true,
      description: "The global id of the rule that changed, also after RULE_DELETED: the cache entry to evict (null for VOLUME_QUOTA_CHANGED)",
      resolve: (e) => (e.ruleUuid ? globalId("QuotaRule", e.ruleUuid) : null),
    }),
    changed: t.stringList({
      nullable: true,
      description: "RULE_UPDATED: the QuotaRule fields the change gave a new value (spaceHardLimitBytes, userMapping, …); null for other kinds",
      resolve: (e) => (e.kind === "RULE_UPDATED" ? (e.changed ?? []).map((field) => GRAPHQL_LIMIT_NAMES[field] ?? field) : null),
    }),
    rule: t.prismaField({
      type: "QuotaRule",
      nullable: true,
      description: "The rule as it is now (null once deleted)",
      resolve: (query, e, _a, ctx) => (e.ruleUuid ? ctx.db.quotaRule.findUnique({ ...query, where: { uuid: e.ruleUuid } }) : null),
    }),
    volume: t.prismaField({
      type: "Volume",
      nullable: true,
      description: "The volume as it is now (null once deleted)",
      resolve: (query, e, _a, ctx) => ctx.db.volume.findUnique({ ...query, where: { uuid: e.volumeUuid } }),
    }),
  }),
});

builder.subscriptionField("quotaChanges", (t) =>
  t.field({
    type: QuotaChangeRef,
    description: "Rule and volume-quota changes, optionally scoped to an SVM and/or a volume",
    args: {
      svm: t.arg({ type: SvmSelector, description: "Only this SVM's changes" }),
      volumeId: t.arg.id({ description: "Only this volume's changes (its global id, or its uuid)" }),
      after: t.arg.string({ description: "resume after this cursor" }),
    },
    subscribe: async function* (_r, args, ctx) {
      const svmRef = svmSelection(args.svm);
      let svmUuid = svmRef.uuid;
      if (svmRef.name) {
        const svm = await ctx.db.svm.findUnique({ where: { name: svmRef.name } });
        if (!svm) throw new NotFoundError(`SVM "${svmRef.name}" does not exist.`);
        svmUuid = svm.uuid;
      }
      const volumeUuid = args.volumeId == null ? undefined : volumeUuidOf(args.volumeId, "volumeId");
      if (args.after && !isEventId(args.after)) throw new InvalidInputError(`Invalid cursor "${args.after}"`);
      const sub = ctx.bus.subscribe(quotaTopic, args.after ? { after: args.after } : {});
      try {
        for await (const e of sub) {
          const change = e.data;
          if (svmUuid && change.svmUuid !== svmUuid) continue;
          if (volumeUuid && change.volumeUuid !== volumeUuid) continue;
          yield { ...change, cursor: e.id };
        }
      } finally {
        await sub.return();
      }
    },
    resolve: (e) => e,
  }),
);
