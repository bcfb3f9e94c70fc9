import type { AppContext } from "../../platform/context.js";

/** Small JSON documents in the Setting table (GUI settings, VM host settings), one row per key. */
export async function readSetting<T>(ctx: AppContext, key: string): Promise<T | undefined> {
  const row = await ctx.db.setting.findUnique({ where: { key } });
  return row ? (JSON.parse(row.valueJson) as T) : undefined;
}

export async function writeSetting(ctx: AppContext, key: string, value: unknown): Promise<void> {
  const valueJson = JSON.stringify(value);
  await ctx.db.setting.upsert({ where: { key }, create: { key, valueJson }, update: { valueJson } });
}
