import { qemuPropertiesSchema } from "../../node-model/qemu-properties.js";
import { nodeProperties } from "../../node-model/serialize.js";
import { findOnPath } from "../../../platform/core/executables.js";
import { QemuProcess } from "../qemu.js";
import { prepareQemu, qemuBinary, qemuNodeOptions, qemuProperties } from "../qemu-launch.js";
import type { ProcessDriver } from "./driver.js";

/**
 * QEMU: one confined `qemu-system-*` process per started node (qemu.ts, qemu-launch.ts), every adapter bound at
 * start, paused and reset through QMP, counted by the compute's memory cap.
 */
export const qemuDriver = {
  nodeType: "qemu" as const,
  runs: "process",
  consoles: { types: ["telnet", "none"], default: "telnet" },
  udpOffsets: [0],
  suspends: true,

  /** The 409 GNS3 gives when the node's emulator binary is not installed. */
  unavailable(node) {
    try {
      qemuBinary(node);
      return null;
    } catch (e) {
      return (e as Error).message;
    }
  },
  listedWhen: () => findOnPath("qemu-system-x86_64") !== null,
  adaptersAtStart: (node) => qemuProperties(node).adapters,
  memoryMb: (node) => qemuNodeOptions(node).memoryMb,
  carrierFollowsLinks: (node) => qemuProperties(node).replicate_network_connection_state,

  async start(node, launch) {
    const options = await prepareQemu(launch.ctx, { node, workdir: launch.workdir, runDir: launch.runDir, owner: launch.owner, nics: launch.nics });
    const proc: QemuProcess = new QemuProcess({ ...options, onExit: (log) => launch.onExit(proc, log) });
    await proc.start();
    return proc;
  },

  // GNS3's qemu compute object carries its properties flat, as they are sent.
  computeView: (properties) => properties,
  // Its images must be on that compute.
  remoteCreate: async (_ctx, node) => computeApiProperties(nodeProperties(node)),
  remoteSettings: (properties) => computeApiProperties(properties),
} satisfies ProcessDriver;

/** The qemu properties the compute API takes (a node imported from a .gns3 file may carry other keys). */
const QEMU_KEYS = Object.keys(qemuPropertiesSchema.shape);
const computeApiProperties = (properties: Record<string, unknown>) => Object.fromEntries(Object.entries(properties).filter(([k]) => QEMU_KEYS.includes(k)));
