import type { Gns3Routes } from "../rest/kit.js";
import { sendJson } from "../rest/kit.js";
import { findOnPath } from "../../platform/core/executables.js";
import { kvmUsable, qemuBinaries } from "./qemu-host.js";

/**
 * The qemu host routes of a compute (compat-qemu §1): the emulator binaries the GUI's template wizard offers, the
 * qemu-img binaries, and the KVM capability. The controller reaches them as `/v2/computes/{id}/qemu/…` through its
 * generic forwarder.
 */
export function qemuHostRoutes(routes: Gns3Routes): void {
  routes.add("GET", "/v2/compute/qemu/binaries", async ({ res }) => sendJson(res, 200, await qemuBinaries("system")));
  routes.add("GET", "/v2/compute/qemu/img-binaries", async ({ res }) => sendJson(res, 200, await qemuBinaries("img")));
  routes.add("GET", "/v2/compute/qemu/capabilities", async ({ res }) => {
    // Upstream answers x86_64 and i386 as soon as /dev/kvm exists; here only when a real KVM answered a trial.
    const binary = findOnPath("qemu-system-x86_64");
    sendJson(res, 200, { kvm: binary && (await kvmUsable(binary)) ? ["x86_64", "i386"] : [] });
  });
}
