import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { AppContext } from "../../platform/context.js";
import { parseInput } from "../../platform/input.js";
import { publishControllerEvent } from "../core/events.js";
import { readSetting, writeSetting } from "./store.js";

/**
 * The GUI's free-form settings document (GNS3 2.0/2.1 `/v2/settings`, removed upstream in 2.2; kept here as a
 * 2.1 compatibility extension). The server only stamps each save with a fresh `modification_uuid`, which lets
 * clients tell whether another client changed the settings since they last read them.
 */
export const guiSettingsSchema = z.looseObject({}, { error: "Settings must be a JSON object" });
export type GuiSettings = Record<string, unknown>;
const KEY = "gui";

export async function getSettings(ctx: AppContext): Promise<GuiSettings> {
  return (await readSetting<GuiSettings>(ctx, KEY)) ?? {};
}

export async function updateSettings(ctx: AppContext, input: unknown): Promise<GuiSettings> {
  const settings = { ...parseInput(guiSettingsSchema, input), modification_uuid: randomUUID() };
  await writeSetting(ctx, KEY, settings);
  await publishControllerEvent(ctx, { type: "settings.updated", settings });
  return settings;
}
