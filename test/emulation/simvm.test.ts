import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { findOnPath } from "../../src/emulation/simvm/engines.js";
import { call, gql, startTestServer, type TestServer } from "../support/server.js";

const DEFAULTS = {
  allocate_vcpus_ram: true,
  enable: false,
  engine: "vmware",
  headless: false,
  port: 80,
  ram: 2048,
  vcpus: 1,
  vmname: null,
  when_exit: "stop",
};

describe.each(["/v2/simvm", "/v2/gns3vm"])("VM host settings at %s", (base) => {
  let s: TestServer;
  beforeAll(async () => void (s = await startTestServer()));
  afterAll(() => s.close());
  // The settings are one per server: each test starts from GNS3's defaults, whatever an earlier test stored.
  beforeEach(async () => {
    expect((await call(s.url, "PUT", base, DEFAULTS)).status).toBe(201);
  });

  it("starts from GNS3's defaults", async () => {
    // A server of its own: the defaults a new server has, not ones a PUT restored.
    const fresh = await startTestServer();
    try {
      const r = await call(fresh.url, "GET", base);
      expect(r.status).toBe(200);
      expect(r.headers.get("x-route")).toBe(base);
      expect(r.body).toEqual(DEFAULTS);
    } finally {
      await fresh.close();
    }
  });

  it("PUT answers 201 with the settings and stores them", async () => {
    const full = { ...DEFAULTS, vmname: "TEST VM", vcpus: 2 };
    const r = await call(s.url, "PUT", base, full);
    expect(r.status).toBe(201);
    expect(r.body).toEqual(full);
    expect((await call(s.url, "GET", base)).body).toEqual(full);
  });

  it("merges a partial PUT instead of replacing the settings", async () => {
    expect((await call(s.url, "PUT", base, { ...DEFAULTS, vmname: "TEST VM", vcpus: 2 })).status).toBe(201);
    const r = await call(s.url, "PUT", base, { ram: 4096, engine: "virtualbox" });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ ...DEFAULTS, vmname: "TEST VM", vcpus: 2, ram: 4096, engine: "virtualbox" });
    expect((await call(s.url, "GET", base)).body).toEqual(r.body);
  });

  it("applies concurrent partial PUTs without losing any of them", async () => {
    const parts = [{ vcpus: 3 }, { ram: 1024 }, { port: 8080 }, { headless: true }, { when_exit: "keep" }, { vmname: "race" }, { allocate_vcpus_ram: false }];
    const answers = await Promise.all(parts.map((p) => call(s.url, "PUT", base, p)));
    expect(answers.map((a) => a.status)).toEqual(parts.map(() => 201));
    expect((await call(s.url, "GET", base)).body).toMatchObject(Object.assign({}, ...parts));
    await call(s.url, "PUT", base, { ...DEFAULTS, vmname: "TEST VM", vcpus: 2, ram: 4096, engine: "virtualbox" });
  });

  it("validates: bad enum, wrong type, unknown field, out-of-range port (400, settings unchanged)", async () => {
    const before = (await call(s.url, "GET", base)).body;
    const bad = await call(s.url, "PUT", base, { when_exit: "explode" });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ status: 400, method: "PUT", path: base, request: { when_exit: "explode" } });
    expect(bad.body.message).toMatch(/'explode' is not one of \['stop', 'suspend', 'keep'\]$/);
    expect((await call(s.url, "PUT", base, { engine: "qemu" })).status).toBe(400);
    expect((await call(s.url, "PUT", base, { vcpus: "two" })).body.message).toMatch(/'two' is not of type/);
    expect((await call(s.url, "PUT", base, { vcpus: 1.5 })).status).toBe(400);
    expect((await call(s.url, "PUT", base, { port: 0 })).status).toBe(400);
    expect((await call(s.url, "PUT", base, { colour: "red" })).body.message).toMatch(/Additional properties are not allowed \('colour' was unexpected\)/);
    expect((await call(s.url, "GET", base)).body).toEqual(before);
  });

  it("lists the engines available on this platform", async () => {
    const r = await call(s.url, "GET", `${base}/engines`);
    expect(r.status).toBe(200);
    const ids = r.body.map((e: any) => e.engine_id);
    expect(ids).toEqual(process.platform === "win32" ? ["vmware", "virtualbox", "hyper-v", "remote"] : ["vmware", "virtualbox", "remote"]);
    for (const e of r.body) expect(Object.keys(e).sort()).toEqual(["description", "engine_id", "name", "support_headless", "support_ram", "support_when_exit"]);
    expect(r.body.find((e: any) => e.engine_id === "remote")).toMatchObject({ support_headless: false, support_ram: false, support_when_exit: false });
  });

  it("lists an engine's VMs: [] without the hypervisor, registered computes for remote, 404 for an unknown engine", async () => {
    for (const [engine, tool] of [["vmware", "vmrun"], ["virtualbox", "VBoxManage"]]) {
      if (findOnPath(tool)) continue; // only the absent case can be asserted without a hypervisor
      expect(await call(s.url, "GET", `${base}/engines/${engine}/vms`)).toMatchObject({ status: 200, body: [] });
    }
    expect((await call(s.url, "GET", `${base}/engines/remote/vms`)).body).toEqual([]);
    await call(s.url, "POST", "/v2/computes", { compute_id: "r1", name: "Rack 1", protocol: "http", host: "127.0.0.1", port: 9 });
    expect((await call(s.url, "GET", `${base}/engines/remote/vms`)).body).toEqual([{ vmname: "Rack 1" }]);
    await call(s.url, "DELETE", "/v2/computes/r1");
    expect(await call(s.url, "GET", `${base}/engines/foo/vms`)).toMatchObject({
      status: 404,
      body: { message: "The engine foo is not supported on this server", status: 404 },
    });
  });

  it("refuses to enable an engine that cannot work here (409, settings unchanged)", async () => {
    const before = (await call(s.url, "GET", base)).body;
    if (!findOnPath("VBoxManage")) {
      expect(await call(s.url, "PUT", base, { enable: true, engine: "virtualbox" })).toMatchObject({
        status: 409,
        body: { message: "VBoxManage was not found on the server's PATH", status: 409 },
      });
    }
    if (process.platform !== "win32") {
      expect((await call(s.url, "PUT", base, { enable: true, engine: "hyper-v" })).body.message).toBe("The engine hyper-v is not supported on this server");
    }
    expect((await call(s.url, "PUT", base, { enable: true, engine: null })).body.message).toBe("No engine is selected");
    expect((await call(s.url, "GET", base)).body).toEqual(before);
    const remote = await call(s.url, "PUT", base, { enable: true, engine: "remote" });
    expect(remote.status).toBe(201);
    expect(remote.body).toMatchObject({ enable: true, engine: "remote" });
    expect((await call(s.url, "PUT", base, { enable: false })).status).toBe(201);
  });
});

describe("VM host over GraphQL", () => {
  let s: TestServer;
  beforeAll(async () => void (s = await startTestServer()));
  afterAll(() => s.close());

  it("reads typed settings, merges updates, rejects bad values with typed errors", async () => {
    const q = await gql(s.url, "{ simVm { enabled vmName whenExit engine vcpus ramMb port allocateVcpusRam headless } simVmEngines { engine name supportsRam } }");
    expect(q.errors).toBeUndefined();
    expect(q.data.simVm).toEqual({ enabled: false, vmName: null, whenExit: "STOP", engine: "VMWARE", vcpus: 1, ramMb: 2048, port: 80, allocateVcpusRam: true, headless: false });
    expect(q.data.simVmEngines.map((e: any) => e.engine)).toContain("REMOTE");

    const u = await gql(s.url, `mutation { updateSimVm(input: { whenExit: SUSPEND, vcpus: 4, engine: REMOTE }) { ... on UpdateSimVmPayload { simVm { whenExit vcpus engine ramMb } } } }`);
    expect(u.data.updateSimVm.simVm).toEqual({ whenExit: "SUSPEND", vcpus: 4, engine: "REMOTE", ramMb: 2048 });
    expect((await call(s.url, "GET", "/v2/simvm")).body).toMatchObject({ when_exit: "suspend", vcpus: 4, engine: "remote", ram: 2048 });

    const bad = await gql(s.url, `mutation { updateSimVm(input: { port: 70000 }) { __typename ... on Error { message } } }`);
    expect(bad.data.updateSimVm.__typename).toBe("InvalidInputError");
    const badEnum = await gql(s.url, `mutation { updateSimVm(input: { whenExit: EXPLODE }) { __typename } }`);
    expect(badEnum.errors?.[0].message).toMatch(/EXPLODE/);

    const vms = await gql(s.url, `{ simVmVms(engine: REMOTE) { ... on QuerySimVmVmsSuccess { data } } }`);
    expect(vms.data.simVmVms.data).toEqual([]);
  });
});
