import { ConflictError, InvalidInputError, NotFoundError } from "../../platform/core/errors.js";
import { builder, enumValues } from "../../platform/graphql/builder.js";
import { mutationErrors, payloadType } from "../../platform/graphql/mutation.js";
import { listEngines, listEngineVms, type SimVmEngine } from "./engines.js";
import { ENGINES, WHEN_EXIT, getSimVmSettings, updateSimVmSettings, type SimVmSettings } from "./operations.js";

const SimVmEngineId = builder.enumType("SimVmEngineId", {
  description: "The hypervisor that runs the VM host (GNS3 VM)",
  values: enumValues(ENGINES, {
    vmware: "VMware Workstation, Player or Fusion",
    virtualbox: "VirtualBox",
    "hyper-v": "Microsoft Hyper-V",
    remote: "A VM host that runs on another machine",
  }),
});
const SimVmWhenExit = builder.enumType("SimVmWhenExit", {
  description: "What happens to the VM host when the server stops",
  values: enumValues(WHEN_EXIT, { stop: "Shut the VM down", suspend: "Suspend the VM (it resumes where it was)", keep: "Leave the VM running" }),
});

const SimVmSettingsRef = builder.objectRef<SimVmSettings>("SimVmSettings").implement({
  description: "The VM host (GNS3 VM) settings",
  fields: (t) => ({
    enabled: t.exposeBoolean("enable", { description: "Whether the server starts and uses the VM host" }),
    vmName: t.exposeString("vmname", { nullable: true, description: "The VM's name in its hypervisor" }),
    whenExit: t.field({ type: SimVmWhenExit, description: "What happens to the VM when the server stops", resolve: (s) => s.when_exit }),
    headless: t.exposeBoolean("headless", { description: "Whether the VM runs without a window" }),
    engine: t.field({ type: SimVmEngineId, nullable: true, description: "The hypervisor that runs the VM", resolve: (s) => s.engine }),
    allocateVcpusRam: t.exposeBoolean("allocate_vcpus_ram", { description: "Whether the server sets the VM's vCPUs and RAM before starting it" }),
    vcpus: t.exposeInt("vcpus", { description: "Virtual CPUs given to the VM" }),
    ramMb: t.exposeInt("ram", { description: "Memory given to the VM, in MB" }),
    port: t.exposeInt("port", { description: "The TCP port of the GNS3 server inside the VM" }),
  }),
});

const SimVmEngineRef = builder.objectRef<SimVmEngine>("SimVmEngine").implement({
  description: "A hypervisor that can run the VM host, and what it lets the server control",
  fields: (t) => ({
    engine: t.field({ type: SimVmEngineId, description: "The engine (what `simVm.engine` and `simVmVms(engine:)` name)", resolve: (e) => e.engine_id }),
    name: t.exposeString("name", { description: "Its name, for people" }),
    description: t.exposeString("description", { description: "What it is and when to choose it" }),
    supportsWhenExit: t.exposeBoolean("support_when_exit", { description: "Whether `whenExit` applies to it" }),
    supportsHeadless: t.exposeBoolean("support_headless", { description: "Whether it can run the VM without a window" }),
    supportsRam: t.exposeBoolean("support_ram", { description: "Whether the server can set the VM's vCPUs and RAM" }),
  }),
});

const UpdateSimVmInput = builder.inputType("UpdateSimVmInput", {
  description: "Changes to the VM host settings: only the fields given change",
  fields: (t) => ({
    enabled: t.boolean({ description: "Whether the server starts and uses the VM host" }),
    vmName: t.string({ description: "The VM's name in its hypervisor" }),
    whenExit: t.field({ type: SimVmWhenExit, description: "What happens to the VM when the server stops" }),
    headless: t.boolean({ description: "Run the VM without a window" }),
    engine: t.field({ type: SimVmEngineId, description: "The hypervisor that runs the VM" }),
    allocateVcpusRam: t.boolean({ description: "Set the VM's vCPUs and RAM before starting it" }),
    vcpus: t.int({ description: "Virtual CPUs to give the VM" }),
    ramMb: t.int({ description: "Memory to give the VM, in MB" }),
    port: t.int({ description: "The TCP port of the GNS3 server inside the VM" }),
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
  simVm: t.field({ type: SimVmSettingsRef, description: "The VM host (GNS3 VM) settings", resolve: (_r, _a, ctx) => getSimVmSettings(ctx) }),
  simVmEngines: t.field({ type: [SimVmEngineRef], description: "The hypervisors that can run the VM host", resolve: () => listEngines() }),
  simVmVms: t.field({
    type: ["String"],
    description: "Names of the VMs the engine's hypervisor offers; empty when it is not installed",
    errors: { types: [NotFoundError, ConflictError] },
    args: { engine: t.arg({ type: SimVmEngineId, required: true, description: "The hypervisor to ask" }) },
    resolve: async (_r, args, ctx) => (await listEngineVms(ctx, args.engine)).map((v) => v.vmname),
  }),
}));

builder.mutationField("updateSimVm", (t) =>
  t.field({
    type: payloadType<{ simVm: SimVmSettings }>("updateSimVm", "What `updateSimVm` changed: the VM host settings", (f) => ({
      simVm: f.field({ type: SimVmSettingsRef, description: "The VM host settings as they now are", resolve: (p) => p.simVm }),
    })),
    description: "Changes the VM host (GNS3 VM) settings",
    errors: mutationErrors("updateSimVm", [InvalidInputError, ConflictError]),
    args: { input: t.arg({ type: UpdateSimVmInput, required: true, description: "The changes" }) },
    resolve: async (_r, args, ctx) => ({
      simVm: await updateSimVmSettings(
        ctx,
        Object.fromEntries(Object.entries(args.input).filter(([, v]) => v !== undefined).map(([k, v]) => [KEYS[k as keyof typeof KEYS], v])),
      ),
    }),
  }),
);
