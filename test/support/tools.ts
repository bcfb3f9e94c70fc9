import Docker from "dockerode";
import { findOnPath } from "../../src/platform/core/executables.js";
import { hostLinkUnavailable } from "../../src/emulation/runtime/host-link.js";
import { natUnavailable } from "../../src/emulation/runtime/nat-network.js";

/**
 * Tests that need a system tool (vpcs, ansible-playbook) skip where it is missing — except in CI, where
 * PATCHBAY_TEST_REQUIRE_TOOLS=1 turns a missing tool into a failure, so nothing is skipped silently.
 */
export function toolAvailable(name: string, present: boolean): boolean {
  if (!present && process.env.PATCHBAY_TEST_REQUIRE_TOOLS) throw new Error(`${name} is required (PATCHBAY_TEST_REQUIRE_TOOLS) but not installed`);
  return present;
}

/** Whether the host's dockerd answers (scripts/start-dockerd.sh starts it in CI). */
export const dockerdAnswers = await new Docker({ socketPath: "/var/run/docker.sock" }).ping().then(
  () => true,
  () => false,
);

/**
 * The node types a local compute lists in its capabilities on this host: qemu only where QEMU is installed, docker
 * only where dockerd answers, cloud and nat where socat and root are there (nat also needs virbr0, or ip, dnsmasq
 * and nft for Patchbay's own bridge).
 */
export const localNodeTypes = () => {
  const hostLinks = hostLinkUnavailable("") === null;
  const nat = { natInterface: "virbr0", bridge: "pbnat0", subnet: "192.168.122.0/24" };
  return [
    "vpcs",
    "ethernet_hub",
    "ethernet_switch",
    ...(findOnPath("qemu-system-x86_64") ? ["qemu"] : []),
    ...(dockerdAnswers ? ["docker"] : []),
    ...(hostLinks ? ["cloud"] : []),
    ...(hostLinks && natUnavailable(nat) === null ? ["nat"] : []),
  ];
};
