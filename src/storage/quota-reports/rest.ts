import type { Router } from "express";
import type { AppContext } from "../../platform/context.js";
import { invalid } from "../ontap/body.js";
import { mountReads, type ResourceSpec } from "../ontap/resource.js";
import { svmRef } from "../svms/operations.js";
import { limitsObject, qtreeIds, qtreeObject, volumeRef } from "../quota-rules/serialize.js";
import { getQuotaReport, reportInclude } from "./operations.js";

/**
 * Quota reports show the limits enforced in the file system (a copy taken when quota is turned on or resized),
 * not the rules. Usage is 0: Patchbay emulates the quota policy, no data is written to these volumes.
 */
function getReport(ctx: AppContext, volumeUuid: string, index: string) {
  if (!/^\d{1,9}$/.test(index)) throw invalid("index", "an integer");
  return getQuotaReport(ctx, volumeUuid, Number(index));
}
type ReportRow = Awaited<ReturnType<typeof getQuotaReport>>;

const usage = (hard: bigint | null, soft: bigint | null) => ({ ...(limitsObject(hard, soft) ?? {}), used: { total: 0 } });

export function mountQuotaReports(router: Router, ctx: AppContext): void {
  const COLUMNS: Record<string, string> = { index: "reportIndex", type: "type", "volume.uuid": "volumeUuid", "qtree.name": "qtreeName" };
  const spec: ResourceSpec<ReportRow> = {
    filterable: {
      index: { type: "int", column: "reportIndex" },
      type: { type: "string", column: "type" },
      "volume.uuid": { type: "string", column: "volumeUuid" },
      "volume.name": { type: "string", column: "name", path: ["volume"] },
      "svm.uuid": { type: "string", column: "svmUuid", path: ["volume"] },
      "svm.name": { type: "string", column: "name", path: ["volume", "svm"] },
      "qtree.name": { type: "string", column: "qtreeName", nullable: true },
      "group.name": { type: "string", column: "groupName", nullable: true },
      "space.hard_limit": { type: "bigint", column: "spaceHardLimit", nullable: true },
      "files.hard_limit": { type: "bigint", column: "filesHardLimit", nullable: true },
    },
    sortable: new Set(Object.keys(COLUMNS)),
    defaults: ["svm", "volume", "index"],
    keys: ["index"],
    source: {
      keyColumn: "ruleUuid",
      orderFor: (f, dir) => ({ [COLUMNS[f]]: dir }),
      findMany: (args) => ctx.db.enforcedQuota.findMany({ ...(args as object), include: reportInclude }),
      count: (args) => ctx.db.enforcedQuota.count(args as never),
      keyOf: (r) => r.ruleUuid,
    },
    records: async (rows) => {
      const ids = await qtreeIds(ctx, rows);
      return rows.map((r) => ({
        svm: svmRef(r.volume.svm),
        volume: volumeRef(r.volume),
        index: r.reportIndex,
        type: r.type,
        ...(r.qtreeName !== null ? { qtree: qtreeObject(r.volumeUuid, r.qtreeName, ids.get(`${r.volumeUuid}/${r.qtreeName}`)) } : {}),
        ...(r.type === "user" ? { users: JSON.parse(r.usersJson) } : {}),
        ...(r.type === "group" ? { group: r.groupId !== null ? { id: r.groupId } : { name: r.groupName ?? "" } } : {}),
        space: usage(r.spaceHardLimit, r.spaceSoftLimit),
        files: usage(r.filesHardLimit, r.filesSoftLimit),
        _links: { self: { href: `/api/storage/quota/reports/${r.volumeUuid}/${r.reportIndex}` } },
      }));
    },
  };
  mountReads(router, "/storage/quota/reports", "/:volume/:index", spec, (p) => getReport(ctx, p.volume, p.index));
}
