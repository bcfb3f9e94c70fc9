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

/**
 * Read-modify-write of one document, serialised per key within this server so that concurrent merges never
 * lose each other's fields. `change` may throw to refuse the update (nothing is written).
 */
export function updateSetting<T>(ctx: AppContext, key: string, change: (current: T | undefined) => T): Promise<T> {
  return ctx.services.emulation.settingWrites.run(key, async () => {
    const next = change(await readSetting<T>(ctx, key));
    await writeSetting(ctx, key, next);
    return next;
  });
}
