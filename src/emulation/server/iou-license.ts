import { z } from "zod";
import type { AppContext } from "../../platform/context.js";
import { parseInput } from "../../platform/input.js";
import { readSetting, updateSetting } from "./store.js";

/**
 * The IOU license settings (GNS3 2.2's `/v2/iou_license`): the iourc file's content and whether the license is
 * checked, which GNS3 passes to IOU nodes when they start. Patchbay runs no IOU, but the GUI's Preferences read and
 * save them: kept in the Setting table with GNS3's defaults. As upstream, a PUT merges the keys it sends (both
 * optional, no others) into the stored ones.
 */
export const iouLicenseSchema = z.strictObject({ iourc_content: z.string(), license_check: z.boolean() });
export const iouLicenseUpdateSchema = iouLicenseSchema.partial();

export type IouLicense = z.infer<typeof iouLicenseSchema>;

export const IOU_LICENSE_DEFAULTS: IouLicense = { iourc_content: "", license_check: true };

const KEY = "iou_license";

export async function getIouLicense(ctx: AppContext): Promise<IouLicense> {
  return { ...IOU_LICENSE_DEFAULTS, ...(await readSetting<Partial<IouLicense>>(ctx, KEY)) };
}

export async function updateIouLicense(ctx: AppContext, raw: unknown): Promise<IouLicense> {
  const input = parseInput(iouLicenseUpdateSchema, raw);
  return updateSetting<IouLicense>(ctx, KEY, (stored) => ({ ...IOU_LICENSE_DEFAULTS, ...stored, ...input }));
}
