import { z } from "zod";
import type { AppContext } from "../../platform/context.js";
import { ConflictError } from "../../platform/core/errors.js";
import { parseInput } from "../../platform/input.js";
import { readSetting, updateSetting } from "../server/store.js";
import { engineUnavailable } from "./engines.js";

/**
 * The VM host settings (GNS3's "GNS3 VM": a VM on a local hypervisor or a remote server that runs the heavier
 * nodes). Unlike GNS3 2.2.59, which stores whatever PUT sends and drops the keys it did not send, an update is
 * validated against the schema and merged into the current settings.
 */
export const ENGINES = ["vmware", "virtualbox", "hyper-v", "remote"] as const;
export type EngineId = (typeof ENGINES)[number];
export const WHEN_EXIT = ["stop", "suspend", "keep"] as const;

export const simVmSettingsSchema = z.strictObject({
  enable: z.boolean(),
  vmname: z.string().nullable(),
  when_exit: z.enum(WHEN_EXIT),
  headless: z.boolean(),
  engine: z.enum(ENGINES).nullable(),
  allocate_vcpus_ram: z.boolean(),
  vcpus: z.int().min(1),
  ram: z.int().min(1),
  port: z.int().min(1).max(65535),
});
export const simVmUpdateSchema = simVmSettingsSchema.partial();

export type SimVmSettings = z.infer<typeof simVmSettingsSchema>;
export type SimVmUpdate = z.infer<typeof simVmUpdateSchema>;

export const SIMVM_DEFAULTS: SimVmSettings = {
  enable: false,
  vmname: null,
  when_exit: "stop",
  headless: false,
  engine: "vmware",
  allocate_vcpus_ram: true,
  vcpus: 1,
  ram: 2048,
  port: 80,
};

const KEY = "simvm";

export async function getSimVmSettings(ctx: AppContext): Promise<SimVmSettings> {
  return { ...SIMVM_DEFAULTS, ...(await readSetting<Partial<SimVmSettings>>(ctx, KEY)) };
}

/**
 * Enabling needs an engine that can work here (GNS3 answers 409 when starting the VM fails). Patchbay does not
 * drive the VM itself: it stores the settings for clients.
 */
export async function updateSimVmSettings(ctx: AppContext, raw: unknown): Promise<SimVmSettings> {
  const input = parseInput(simVmUpdateSchema, raw);
  return updateSetting<SimVmSettings>(ctx, KEY, (stored) => {
    const settings = { ...SIMVM_DEFAULTS, ...stored, ...input };
    if (settings.enable) {
      const problem = settings.engine ? engineUnavailable(settings.engine) : "No engine is selected";
      if (problem) throw new ConflictError(problem);
    }
    return settings;
  });
}
