import { describe, expect, it } from "vitest";
import { natRuleset, parseNatSubnet } from "../../src/emulation/runtime/nat-network.js";
import { isSpecialInterface } from "../../src/emulation/runtime/host-interfaces.js";

describe("unit: Patchbay's own NAT network", () => {
  it("takes a private subnet: the bridge gets the first address, DHCP the rest but the broadcast", () => {
    expect(parseNatSubnet("192.168.122.0/24")).toMatchObject({
      cidr: "192.168.122.0/24",
      gateway: "192.168.122.1",
      rangeStart: "192.168.122.2",
      rangeEnd: "192.168.122.254",
      netmask: "255.255.255.0",
    });
    // A host address is taken as its network.
    expect(parseNatSubnet("10.7.9.77/20")).toMatchObject({ cidr: "10.7.0.0/20", gateway: "10.7.0.1", rangeEnd: "10.7.15.254", netmask: "255.255.240.0" });
    expect(parseNatSubnet("172.31.0.0/29")).toMatchObject({ gateway: "172.31.0.1", rangeStart: "172.31.0.2", rangeEnd: "172.31.0.6" });
  });

  it("refuses public, malformed and too large or too small subnets", () => {
    expect(() => parseNatSubnet("8.8.8.0/24")).toThrow(/not in a private range/);
    expect(() => parseNatSubnet("172.32.0.0/24")).toThrow(/not in a private range/);
    expect(() => parseNatSubnet("192.168.1.0/8")).toThrow(/between 16 and 29/);
    expect(() => parseNatSubnet("10.0.0.0/30")).toThrow(/between 16 and 29/);
    expect(() => parseNatSubnet("10.0.0.300/24")).toThrow(/not an IPv4 subnet/);
    expect(() => parseNatSubnet("10.0.0.0")).toThrow(/not an IPv4 subnet/);
  });

  it("masquerades what leaves the subnet and forwards only the lab's traffic; drops other forwarding only when it switched forwarding on", () => {
    const rules = natRuleset("patchbay_pbnat0", "pbnat0", "192.168.122.0/24", false);
    expect(rules).toContain("type nat hook postrouting priority srcnat; policy accept;");
    expect(rules).toContain("ip saddr 192.168.122.0/24 ip daddr != 192.168.122.0/24 masquerade");
    expect(rules).toContain('iifname "pbnat0" ip saddr 192.168.122.0/24 accept');
    expect(rules).toContain('oifname "pbnat0" ct state established,related accept');
    expect(rules.split("\n").filter((l) => l.trim() === "drop")).toEqual([]);
    const restricted = natRuleset("patchbay_pbnat0", "pbnat0", "192.168.122.0/24", true);
    expect(restricted.split("\n").filter((l) => l.trim() === "drop")).toHaveLength(1);
  });

  it("marks interfaces special as GNS3 does, without GNS3 2.2's ends-with-one-of-'-nic' bug", () => {
    expect(["lo", "docker0", "virbr0", "vethab12", "gns3tap0-0", "VMnet8", "bridge0"].map(isSpecialInterface)).toEqual([true, true, true, true, true, true, true]);
    expect(["eth0", "gltestn", "ens3", "tap0", "wlan"].map(isSpecialInterface)).toEqual([false, false, false, false, false]);
  });
});
