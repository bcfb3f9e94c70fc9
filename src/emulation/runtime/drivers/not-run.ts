import type { ConsoleRules } from "./driver.js";

/**
 * The GNS3 node types this compute has no driver for. Such nodes can be created (and placed on another
 * compute); here a start, suspend or reload is refused with a 409 naming what the type needs. Their console
 * rules are GNS3's, checked whichever compute the node is on. A type that gets a driver leaves this table.
 */
export interface NotRunHere {
  /** What running it would take (the 409 says "they need …"). */
  needs: string;
  consoles: ConsoleRules;
  /** Dynamips routers have idle-PC values (the auto_idlepc and idlepc_proposals routes). */
  idlePc?: boolean;
}

const telnetByDefault: ConsoleRules = { default: "telnet" };
const noConsoleByDefault: ConsoleRules = { default: null };

export const NOT_RUN_HERE: Readonly<Record<string, NotRunHere>> = {
  dynamips: { needs: "the Dynamips emulator and a Cisco IOS image", consoles: telnetByDefault, idlePc: true },
  iou: { needs: "the IOU binary and an IOU licence", consoles: telnetByDefault },
  virtualbox: { needs: "VirtualBox (VBoxManage) and a virtual machine", consoles: telnetByDefault },
  vmware: { needs: "VMware (vmrun) and a virtual machine", consoles: telnetByDefault },
  traceng: { needs: "TraceNG, which runs on Windows only", consoles: { types: ["none"], default: "none" } },
  frame_relay_switch: { needs: "the Dynamips Frame Relay switch", consoles: noConsoleByDefault },
  atm_switch: { needs: "the Dynamips ATM switch", consoles: noConsoleByDefault },
};
