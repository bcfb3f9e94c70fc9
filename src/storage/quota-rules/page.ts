import type { AppContext } from "../../platform/context.js";
import { isPostgresUrl } from "../../platform/db/client.js";

/**
 * The collection read path of quota rules (REST pages and the GraphQL connection), in two statements instead of
 * five: Prisma applies the filter and the order and returns the page's keys only (the filter language keeps one
 * translation, Prisma's), then one SQL statement loads those rules with their volume, SVM, qtree id and users.
 *
 * Loading the page through Prisma's `include` cost four round trips (rules, users, volumes, SVMs) plus a fifth for
 * the qtree ids, each compiled and its rows mapped by Prisma: ~80 % of a page's server time (docs/benchmarks.md).
 */
export interface RulePageRow {
  uuid: string;
  svmUuid: string;
  volumeUuid: string;
  type: string;
  qtreeName: string | null;
  groupName: string | null;
  groupId: string | null;
  userMapping: boolean | null;
  spaceHardLimit: bigint | null;
  spaceSoftLimit: bigint | null;
  filesHardLimit: bigint | null;
  filesSoftLimit: bigint | null;
  users: { name: string | null; userId: string | null }[];
  volume: { uuid: string; name: string; svm: { uuid: string; name: string } };
  /** The id of the qtree the rule names in its volume (null: no such qtree, or a rule without qtree). */
  qtreeId: number | null;
}

const COLUMNS = [
  "uuid", "svmUuid", "volumeUuid", "type", "qtreeName", "groupName", "groupId", "userMapping",
  "spaceHardLimit", "spaceSoftLimit", "filesHardLimit", "filesSoftLimit",
];

/** The page's keys arrive as one JSON array parameter: one statement text whatever the page size. */
const SQLITE = `SELECT ${COLUMNS.map((c) => `r.${c}`).join(", ")}, v.name AS volumeName, s.uuid AS svmKey, s.name AS svmName, q.qtreeId AS qtreeId,
  (SELECT json_group_array(json_array(u.name, u.userId))
     FROM (SELECT name, userId FROM QuotaRuleUser WHERE ruleUuid = r.uuid ORDER BY position) u) AS users
FROM QuotaRule r
JOIN Volume v ON v.uuid = r.volumeUuid
JOIN Svm s ON s.uuid = v.svmUuid
LEFT JOIN Qtree q ON q.volumeUuid = r.volumeUuid AND q.name = r.qtreeName
WHERE r.uuid IN (SELECT value FROM json_each(?))`;

const POSTGRES = `SELECT ${COLUMNS.map((c) => `r."${c}"`).join(", ")}, v.name AS "volumeName", s.uuid AS "svmKey", s.name AS "svmName", q."qtreeId" AS "qtreeId",
  (SELECT json_agg(json_build_array(u.name, u."userId") ORDER BY u.position)
     FROM "QuotaRuleUser" u WHERE u."ruleUuid" = r.uuid) AS users
FROM "QuotaRule" r
JOIN "Volume" v ON v.uuid = r."volumeUuid"
JOIN "Svm" s ON s.uuid = v."svmUuid"
LEFT JOIN "Qtree" q ON q."volumeUuid" = r."volumeUuid" AND q.name = r."qtreeName"
WHERE r.uuid IN (SELECT json_array_elements_text($1::json))`;

type RawRow = Omit<RulePageRow, "users" | "volume" | "qtreeId"> & {
  volumeName: string;
  svmKey: string;
  svmName: string;
  qtreeId: number | bigint | null;
  /** JSON text on SQLite, already parsed on PostgreSQL; null when the rule has no users. */
  users: string | [string | null, string | null][] | null;
};

/** The rules with these keys, in the order of `uuids` (keys no longer present are skipped). */
export async function loadRulePage(ctx: AppContext, uuids: string[]): Promise<RulePageRow[]> {
  if (!uuids.length) return [];
  const sql = isPostgresUrl(ctx.config.databaseUrl) ? POSTGRES : SQLITE;
  const raw = await ctx.db.$queryRawUnsafe<RawRow[]>(sql, JSON.stringify(uuids));
  const byUuid = new Map<string, RulePageRow>();
  for (const r of raw) {
    const users = typeof r.users === "string" ? (JSON.parse(r.users) as [string | null, string | null][]) : (r.users ?? []);
    byUuid.set(r.uuid, {
      uuid: r.uuid,
      svmUuid: r.svmUuid,
      volumeUuid: r.volumeUuid,
      type: r.type,
      qtreeName: r.qtreeName,
      groupName: r.groupName,
      groupId: r.groupId,
      userMapping: r.userMapping === null ? null : Boolean(r.userMapping),
      spaceHardLimit: big(r.spaceHardLimit),
      spaceSoftLimit: big(r.spaceSoftLimit),
      filesHardLimit: big(r.filesHardLimit),
      filesSoftLimit: big(r.filesSoftLimit),
      users: users.map(([name, userId]) => ({ name, userId })),
      volume: { uuid: r.volumeUuid, name: r.volumeName, svm: { uuid: r.svmKey, name: r.svmName } },
      qtreeId: r.qtreeId === null ? null : Number(r.qtreeId),
    });
  }
  const rows: RulePageRow[] = [];
  for (const uuid of uuids) {
    const row = byUuid.get(uuid);
    if (row) rows.push(row);
  }
  return rows;
}

/** Raw results carry BIGINT columns as bigint on both drivers; a small value may still arrive as a number. */
const big = (v: bigint | number | null): bigint | null => (v === null || typeof v === "bigint" ? v : BigInt(v));

/** A page through Prisma's filter: the keys of the matching rules, then the rules themselves. */
export async function findRulePage(ctx: AppContext, args: { where: object; orderBy: object | object[]; take?: number; skip?: number; cursor?: object }) {
  const keys = await ctx.db.quotaRule.findMany({ ...(args as object), select: { uuid: true } });
  return loadRulePage(ctx, keys.map((k) => k.uuid));
}
