import type { AppContext } from "../../platform/context.js";
import { NotFoundError } from "../../platform/core/errors.js";
import { CODES } from "../core/codes.js";

/** The volume and SVM every report row is read with. */
export const reportInclude = { volume: { include: { svm: true } } } as const;

/** One quota report entry: a volume's enforced limits at `index` (ONTAP's "entry doesn't exist" 404 otherwise). */
export async function getQuotaReport(ctx: AppContext, volumeUuid: string, index: number) {
  const row = await ctx.db.enforcedQuota.findUnique({ where: { volumeUuid_reportIndex: { volumeUuid, reportIndex: index } }, include: reportInclude });
  if (!row) throw new NotFoundError("entry doesn't exist", { code: CODES.notFound, target: "index" });
  return row;
}
