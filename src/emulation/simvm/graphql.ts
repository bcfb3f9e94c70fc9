import { builder, DOMAIN_ERRORS } from "../../platform/graphql/builder.js";
import { listEngines, listEngineVms, type SimVmEngine } from "./engines.js";
import { ENGINES, WHEN_EXIT, getSimVmSettings, updateSimVmSettings, type SimVmSettings } from "./operations.js";

/** GraphQL enum names for the GNS3 values ("hyper-v" → HYPER_V). */
const enumValues = <V extends string>(values: readonly V[]) =>
  Object.fromEntries(values.map((v) => [v.toUpperCase().replace("-", "_"), { value: v }])) as Record<string, { value: V }>;

const SimVmEngineId = builder.enumType("SimVmEngineId", { values: enumValues(ENGINES) });
const SimVmWhenExit = builder.enumType("SimVmWhenExit", {
  description: "What happens to the VM host when the server stops",
  values: enumValues(WHEN_EXIT),
});

const SimVmSettingsRef = builder.objectRef<SimVmSettings>("SimVmSettings").implement({
  description: "The VM host (GNS3 VM) settings",
  fields: (t) => ({
    enabled: t.exposeBoolean("enable"),
    vmName: t.exposeString("vmname", { nullable: true }),
    whenExit: t.field({ type: SimVmWhenExit, resolve: (s) => s.when_exit }),
    headless: t.exposeBoolean("headless"),
    engine: t.field({ type: SimVmEngineId, nullable: true, resolve: (s) => s.engine }),
    allocateVcpusRam: t.exposeBoolean("allocate_vcpus_ram"),
    vcpus: t.exposeInt("vcpus"),
    ramMb: t.exposeInt("ram"),
    port: t.exposeInt("port"),
  }),
});

const SimVmEngineRef = builder.objectRef<SimVmEngine>("SimVmEngine").implement({
  fields: (t) => ({
    id: t.field({ type: SimVmEngineId, resolve: (e) => e.engine_id }),
    name: t.exposeString("name"),
    description: t.exposeString("description"),
    supportsWhenExit: t.exposeBoolean("support_when_exit"),
    supportsHeadless: t.exposeBoolean("support_headless"),
    supportsRam: t.exposeBoolean("support_ram"),
  }),
});

const SimVmSettingsInput = builder.inputType("SimVmSettingsInput", {
  description: "Only the fields given change",
  fields: (t) => ({
    enabled: t.boolean(),
    vmName: t.string(),
    whenExit: t.field({ type: SimVmWhenExit }),
    headless: t.boolean(),
    engine: t.field({ type: SimVmEngineId }),
    allocateVcpusRam: t.boolean(),
    vcpus: t.int(),
    ramMb: t.int(),
    port: t.int(),
  }),
});

/** GraphQL field → GNS3 key; absent fields stay absent so the operation merges. */
const KEYS = {
  enabled: "enable",
  vmName: "vmname",
  whenExit: "when_exit",
  headless: "headless",
  engine: "engine",
  allocateVcpusRam: "allocate_vcpus_ram",
  vcpus: "vcpus",
  ramMb: "ram",
  port: "port",
} as const;

builder.queryFields((t) => ({
  simVm: t.field({ type: SimVmSettingsRef, resolve: (_r, _a, ctx) => getSimVmSettings(ctx) }),
  simVmEngines: t.field({ type: [SimVmEngineRef], resolve: () => listEngines() }),
  simVmVms: t.field({
    type: ["String"],
    description: "Names of the VMs the engine's hypervisor offers; empty when it is not installed",
    errors: { types: DOMAIN_ERRORS },
    args: { engine: t.arg({ type: SimVmEngineId, required: true }) },
    resolve: async (_r, args, ctx) => (await listEngineVms(ctx, args.engine)).map((v) => v.vmname),
  }),
}));

builder.mutationField("updateSimVm", (t) =>
  t.field({
    type: SimVmSettingsRef,
    errors: { types: DOMAIN_ERRORS },
    args: { input: t.arg({ type: SimVmSettingsInput, required: true }) },
    resolve: (_r, args, ctx) =>
      updateSimVmSettings(
        ctx,
        Object.fromEntries(Object.entries(args.input).filter(([, v]) => v !== undefined).map(([k, v]) => [KEYS[k as keyof typeof KEYS], v])),
      ),
  }),
);
