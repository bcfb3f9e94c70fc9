import type { AppContext } from "../../platform/context.js";
import { svmRef } from "../svms/operations.js";
import type { RulePageRow } from "./page.js";

/**
 * The REST form of quota rules. Unlimited limits are omitted (never -1 or 0); numbers are integers. A rule comes
 * from the page loader (qtree id resolved; null: no such qtree) or from a single read (qtree id absent: looked up here).
 */
type RuleRow = Omit<RulePageRow, "svmUuid" | "qtreeId"> & { qtreeId?: number | null };

export const ruleHref = (uuid: string) => `/api/storage/quota/rules/${uuid}`;
export const volumeRef = (v: { uuid: string; name: string }) => ({ name: v.name, uuid: v.uuid, _links: { self: { href: `/api/storage/volumes/${v.uuid}` } } });

export function limitsObject(hard: bigint | null, soft: bigint | null) {
  const o: Record<string, number> = {};
  if (hard !== null) o.hard_limit = Number(hard);
  if (soft !== null) o.soft_limit = Number(soft);
  return Object.keys(o).length ? o : undefined;
}

export const userEntries = (users: { name: string | null; userId: string | null }[]) =>
  users.map((u) => (u.userId !== null ? { id: u.userId } : { name: u.name ?? "" }));

/** The id `qtreeIds` (or a page's loaded ids) found for a rule's (volume, qtree name). */
export const qtreeIdOf = (ids: Map<string, number>, r: { volumeUuid: string; qtreeName: string | null }) => ids.get(`${r.volumeUuid}/${r.qtreeName}`);

/** qtree.id for every (volume, qtree name) in one query. */
export async function qtreeIds(ctx: AppContext, rows: { volumeUuid: string; qtreeName: string | null }[]) {
  const wanted = rows.filter((r) => r.qtreeName);
  const ids = new Map<string, number>();
  if (!wanted.length) return ids;
  const found = await ctx.db.qtree.findMany({
    where: { OR: wanted.map((r) => ({ volumeUuid: r.volumeUuid, name: r.qtreeName! })) },
    select: { volumeUuid: true, name: true, qtreeId: true },
  });
  for (const q of found) ids.set(`${q.volumeUuid}/${q.name}`, q.qtreeId);
  return ids;
}

function loadedIds(rows: RuleRow[]) {
  const ids = new Map<string, number>();
  // As qtreeIds: the default tree rule ("") names no qtree.
  for (const r of rows) if (r.qtreeName && r.qtreeId != null) ids.set(`${r.volumeUuid}/${r.qtreeName}`, r.qtreeId);
  return ids;
}

export function qtreeObject(volumeUuid: string, name: string, id: number | undefined) {
  return id === undefined
    ? { name }
    : { name, id, _links: { self: { href: `/api/storage/qtrees/${volumeUuid}/${id}` } } };
}

export async function ruleRecords(ctx: AppContext, rows: RuleRow[]): Promise<Record<string, unknown>[]> {
  const ids = rows.every((r) => r.qtreeId !== undefined) ? loadedIds(rows) : await qtreeIds(ctx, rows);
  return rows.map((r) => {
    const space = limitsObject(r.spaceHardLimit, r.spaceSoftLimit);
    const files = limitsObject(r.filesHardLimit, r.filesSoftLimit);
    return {
      uuid: r.uuid,
      svm: svmRef(r.volume.svm),
      volume: volumeRef(r.volume),
      type: r.type,
      // Volume-level user/group rules carry no qtree (Ansible compares qtree.name with None).
      ...(r.qtreeName !== null ? { qtree: qtreeObject(r.volumeUuid, r.qtreeName, qtreeIdOf(ids, r)) } : {}),
      ...(r.type === "user" ? { users: userEntries(r.users), user_mapping: r.userMapping ?? false } : {}),
      ...(r.type === "group" ? { group: r.groupId !== null ? { id: r.groupId } : { name: r.groupName ?? "" } } : {}),
      ...(space ? { space } : {}),
      ...(files ? { files } : {}),
      _links: { self: { href: ruleHref(r.uuid) } },
    };
  });
}
