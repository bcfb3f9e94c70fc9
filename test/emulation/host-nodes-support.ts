import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Docker from "dockerode";
import { findOnPath } from "../../src/platform/core/executables.js";
import { hostLinkUnavailable } from "../../src/emulation/runtime/host-link.js";
import { natUnavailable } from "../../src/emulation/runtime/nat-network.js";
import { findOwnedPids } from "../../src/emulation/runtime/processes.js";
import { startTestServer, type TestServer } from "../support/server.js";
import { dockerdAnswers, toolAvailable } from "../support/tools.js";
import { waitFor } from "../support/wait.js";

/**
 * What the client-flow tests (GUI, gns3fy) need to add Cloud, NAT and Docker nodes for real, with the same checks
 * as cloud-nat.test.ts and docker-nodes.test.ts: root, socat/setpriv (cloud), dnsmasq/nft (Patchbay's own NAT
 * bridge), dockerd and the test image. A local-mode server with its own NAT bridge name and private subnet, and a
 * veth pair whose host end the cloud binds (a veth is not "special", so the built-in Cloud template lists it as a
 * port, as the GUI's link dialog shows it). `release` checks that nothing is left: container, helper process, bridge.
 */
const NAT_DEFAULTS = { natInterface: "virbr0", bridge: "pbnat0", subnet: "192.168.122.0/24" };

export const hostNodesReady = () =>
  toolAvailable("dockerd (scripts/start-dockerd.sh)", dockerdAnswers) &&
  toolAvailable("root (cloud and NAT nodes open host interfaces)", process.getuid?.() === 0) &&
  toolAvailable("socat and setpriv", hostLinkUnavailable("") === null) &&
  toolAvailable("dnsmasq and nft (dnsmasq-base, nftables)", natUnavailable(NAT_DEFAULTS) === null);

/** The busybox image of scripts/build-test-docker-image.sh (built once, no registry). */
export const testDockerImage = () =>
  execFileSync(path.resolve(import.meta.dirname, "../../scripts/build-test-docker-image.sh"), { encoding: "utf8" }).trim();

const ip = findOnPath("ip") ?? "/usr/sbin/ip";
const sh = (args: string[]) => execFileSync(ip, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
const docker = new Docker({ socketPath: "/var/run/docker.sock" });

export interface HostNodesLab {
  server: TestServer;
  /** The host end of the veth: the cloud's port of that name is the one the tests link. */
  cloudInterface: string;
  bridge: string;
  release: () => Promise<void>;
}

export async function hostNodesLab(prefix: string): Promise<HostNodesLab> {
  const tag = randomBytes(3).toString("hex");
  const cloudInterface = `${prefix}v${tag}`;
  const peer = `${prefix}p${tag}`;
  const bridge = `${prefix}b${tag}`;
  const net = `10.${60 + (randomBytes(1)[0] % 40)}.${1 + (randomBytes(1)[0] % 250)}`;
  sh(["link", "add", cloudInterface, "type", "veth", "peer", "name", peer]);
  sh(["link", "set", cloudInterface, "up"]);
  sh(["link", "set", peer, "up"]);
  let server: TestServer | undefined;
  try {
    server = await startTestServer({ local: true, nat: { natInterface: `pbnone${tag}`, bridge, subnet: `${net}.0/24` } });
  } catch (e) {
    sh(["link", "del", cloudInterface]);
    throw e;
  }
  const s = server;
  return {
    server: s,
    cloudInterface,
    bridge,
    release: async () => {
      const dataDir = path.resolve(s.dataDir);
      try {
        await s.close();
      } finally {
        if (fs.existsSync(`/sys/class/net/${cloudInterface}`)) sh(["link", "del", cloudInterface]);
      }
      await waitFor(async () => (await docker.listContainers({ all: true, filters: { label: [`org.patchbay.owner=${dataDir}`] } })).length === 0, 15_000, "no container left");
      await waitFor(() => findOwnedPids(dataDir).length === 0, 15_000, "no node or helper process left");
      await waitFor(() => !fs.existsSync(`/sys/class/net/${bridge}`), 10_000, "the NAT bridge to go");
    },
  };
}

/** The containers of one project (the docker driver labels them). */
export const projectContainers = (projectId: string) => docker.listContainers({ all: true, filters: { label: [`org.patchbay.project=${projectId}`] } });
