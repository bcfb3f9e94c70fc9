import { execFile, execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../support/server.js";
import { step } from "../support/steps.js";
import { toolAvailable } from "../support/tools.js";

/**
 * The real client: Debian's `ansible` package (ansible-core 2.14, netapp.ontap 22.7.0) runs
 * netapp.ontap.na_ontap_quotas with use_rest: always against Patchbay over HTTPS (self-signed) with HTTP Basic auth.
 * Each phase is one ansible-playbook run whose tasks are the step and its idempotent re-run; the test reads the
 * per-task results from the ansible.posix.json stdout callback, then checks the server state over REST. The
 * create, modify and delete phases are one test: each works on the rules the previous phase left.
 */
const hasAnsible = toolAvailable("ansible-playbook", spawnSync("ansible-playbook", ["--version"], { stdio: "ignore" }).status === 0);
const USER = "admin";
const PASSWORD = "ans1ble-pw";

interface TaskResult {
  changed?: boolean;
  failed?: boolean;
  msg?: string;
  actions?: string;
  modify?: Record<string, string | boolean>;
  modify_quota_status?: string | null;
  warnings?: string[];
  [k: string]: unknown;
}

describe.skipIf(!hasAnsible)("storage: real Ansible na_ontap_quotas (skipped when ansible-playbook is missing: apt-get install ansible)", () => {
  let s: TestServer;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "patchbay-ansible-"));

  /** HTTPS + Basic auth request to the server (self-signed certificate accepted). */
  function api(method: string, url: string, body?: unknown): Promise<{ status: number; body: any }> {
    return new Promise((resolve, reject) => {
      const data = body === undefined ? undefined : JSON.stringify(body);
      const req = https.request(
        `${s.url}${url}`,
        {
          method,
          rejectUnauthorized: false,
          auth: `${USER}:${PASSWORD}`,
          headers: data ? { "content-type": "application/json", "content-length": Buffer.byteLength(data) } : {},
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (c) => (text += c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
        },
      );
      req.on("error", reject);
      req.end(data);
    });
  }

  /** Runs one play of na_ontap_quotas tasks; returns the localhost result of each task by name. */
  async function runPlaybook(name: string, tasks: { name: string; args: Record<string, unknown> }[], target = { svm: "svm1", volume: "vol1" }) {
    const file = path.join(dir, `${name}.yml`);
    // JSON is YAML: the playbook is written as JSON so no YAML library is needed.
    const play = [
      {
        name,
        hosts: "localhost",
        connection: "local",
        gather_facts: false,
        module_defaults: {
          "netapp.ontap.na_ontap_quotas": {
            hostname: "127.0.0.1",
            http_port: s.port,
            username: USER,
            password: PASSWORD,
            use_rest: "always",
            validate_certs: false,
            vserver: target.svm,
            volume: target.volume,
          },
        },
        tasks: tasks.map((t) => ({ name: t.name, "netapp.ontap.na_ontap_quotas": t.args })),
      },
    ];
    fs.writeFileSync(file, JSON.stringify(play, null, 2));
    const env = {
      ...process.env,
      ANSIBLE_STDOUT_CALLBACK: "ansible.posix.json",
      ANSIBLE_LOAD_CALLBACK_PLUGINS: "1",
      ANSIBLE_PYTHON_INTERPRETER: "/usr/bin/python3",
      ANSIBLE_LOCALHOST_WARNING: "false",
      ANSIBLE_INVENTORY_UNPARSED_WARNING: "false",
      ANSIBLE_HOME: path.join(dir, "ansible-home"),
      ANSIBLE_LOCAL_TEMP: path.join(dir, "ansible-tmp"),
      ANSIBLE_RETRY_FILES_ENABLED: "false",
      ANSIBLE_NOCOLOR: "1",
    };
    const { stdout, stderr, code } = await new Promise<{ stdout: string; stderr: string; code: number }>((resolve) =>
      execFile("ansible-playbook", ["-i", "localhost,", file], { env, maxBuffer: 32 * 1024 * 1024, timeout: 120_000 }, (err, stdout, stderr) =>
        resolve({ stdout, stderr, code: err ? ((err as { code?: number }).code ?? 1) : 0 }),
      ),
    );
    let out: { plays: { tasks: { task: { name: string }; hosts: Record<string, TaskResult> }[] }[] };
    try {
      out = JSON.parse(stdout);
    } catch {
      throw new Error(`ansible-playbook ${name}: exit ${code}, no JSON on stdout\n${stdout}\n${stderr}`);
    }
    const results = new Map<string, TaskResult>();
    for (const t of out.plays[0]?.tasks ?? []) results.set(t.task.name, t.hosts.localhost);
    if (process.env.DEBUG_ANSIBLE) for (const t of out.plays[0]?.tasks ?? []) console.log(name, t.task.name, JSON.stringify((t.task as any).duration));
    return { results, code, stderr };
  }

  /** Runs the play and expects every task to succeed. */
  async function playbook(name: string, tasks: { name: string; args: Record<string, unknown> }[]): Promise<Map<string, TaskResult>> {
    const { results, code, stderr } = await runPlaybook(name, tasks);
    const failed = [...results].filter(([, r]) => r.failed);
    // A failing task stops the play: name it and show the module's own error.
    expect(failed.map(([n, r]) => `${n}: ${r.msg ?? JSON.stringify(r)}`), `ansible-playbook ${name} (exit ${code})`).toEqual([]);
    expect(code, stderr).toBe(0);
    expect([...results.keys()]).toEqual(tasks.map((t) => t.name));
    return results;
  }

  const TREE = { type: "tree", quota_target: "qt1", set_quota_status: true };
  const USER_RULE = { type: "user", quota_target: "user1", qtree: "", set_quota_status: true };
  const GROUP = { type: "group", quota_target: "group1", qtree: "qt1", set_quota_status: true };

  const RULE_FIELDS = "fields=type,qtree.name,users,group,space,files,user_mapping";
  const rules = async (filter: string) => {
    const r = await api("GET", `/api/storage/quota/rules?svm.name=svm1&volume.name=vol1&${filter}&${RULE_FIELDS}`);
    expect(r.status).toBe(200);
    return r.body.records as any[];
  };
  const treeRules = () => rules("type=tree&qtree.name=qt1");
  const userRules = () => rules("type=user&users.name=user1");
  const groupRules = () => rules("type=group&group.name=group1");
  const volume = async (svm = "svm1", name = "vol1") => (await api("GET", `/api/storage/volumes?name=${name}&svm.name=${svm}&fields=quota`)).body.records[0];
  /** The limits enforced in the file system (copied from the rules on quota on / resize). */
  const reports = async () => {
    const r = await api("GET", "/api/storage/quota/reports?svm.name=svm1&volume.name=vol1&fields=type,qtree,users,group,space,files");
    expect(r.status).toBe(200);
    return r.body.records as any[];
  };
  const reportFor = (rs: any[], pick: (r: any) => boolean) => rs.filter(pick);
  const isTreeQt1 = (r: any) => r.type === "tree" && r.qtree?.name === "qt1";
  const isUser1 = (r: any) => r.type === "user" && r.users?.some((u: any) => u.name === "user1");
  const isGroup1 = (r: any) => r.type === "group" && r.group?.name === "group1";
  /** Hard and soft limits only (reports also carry usage); a missing limit is unlimited. */
  const limits = (r: any) => ({
    space: { hard_limit: r.space?.hard_limit, soft_limit: r.space?.soft_limit },
    files: { hard_limit: r.files?.hard_limit, soft_limit: r.files?.soft_limit },
  });
  const UNLIMITED = { hard_limit: undefined, soft_limit: undefined };

  beforeAll(async () => {
    execFileSync("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
      "-keyout", path.join(dir, "key.pem"), "-out", path.join(dir, "cert.pem")], { stdio: "ignore" });
    s = await startTestServer({
      tls: { certFile: path.join(dir, "cert.pem"), keyFile: path.join(dir, "key.pem") },
      auth: { user: USER, password: PASSWORD },
    });
    expect((await api("POST", "/api/svm/svms?return_timeout=30", { name: "svm1" })).status).toBe(201);
    expect((await api("POST", "/api/storage/volumes?return_timeout=30", { name: "vol1", svm: { name: "svm1" }, size: 10 * 1024 ** 3 })).status).toBe(201);
    expect((await api("POST", "/api/storage/qtrees?return_timeout=30", { name: "qt1", svm: { name: "svm1" }, volume: { name: "vol1" } })).status).toBe(201);
    expect((await volume()).quota.state).toBe("off");
  });
  afterAll(async () => {
    await s?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("fails the task with the server's 401 error when the password is wrong, and changes nothing", async () => {
    // Its own SVM and volume (quota off, no rules), whatever the lifecycle test has done to svm1/vol1.
    const target = { svm: "svm_denied", volume: "vol_denied" };
    expect((await api("POST", "/api/svm/svms?return_timeout=30", { name: target.svm })).status).toBe(201);
    expect((await api("POST", "/api/storage/volumes?return_timeout=30", { name: target.volume, svm: { name: target.svm }, size: 10 * 1024 ** 3 })).status).toBe(201);
    expect((await api("POST", "/api/storage/qtrees?return_timeout=30", { name: "qt1", svm: { name: target.svm }, volume: { name: target.volume } })).status).toBe(201);
    const before = (await api("GET", "/api/storage/quota/rules?return_records=false")).body.num_records;
    const { results, code } = await runPlaybook("bad-password", [{ name: "tree", args: { ...TREE, password: "wrong", file_limit: "1" } }], target);
    expect(code).not.toBe(0);
    expect(results.get("tree")).toMatchObject({ failed: true });
    expect(results.get("tree")?.msg).toMatch(/Error on getting quota rule info: .*not authorized for that command/);
    expect((await api("GET", "/api/storage/quota/rules?return_records=false")).body.num_records).toBe(before);
    expect((await volume(target.svm, target.volume)).quota.state).toBe("off");
  }, 60_000);

  it("the rule lifecycle: creates a tree, a user and a group rule with quota on, modifies them, deletes them; each second run changes nothing", async () => {
    await step("creates a tree, a user and a group rule, turns quota on, and a second run changes nothing", async () => {
      const r = await playbook("create", [
        { name: "tree", args: { ...TREE, disk_limit: "1GB", soft_disk_limit: "800MB", file_limit: "1000", soft_file_limit: "800" } },
        { name: "tree again", args: { ...TREE, disk_limit: "1GB", soft_disk_limit: "800MB", file_limit: "1000", soft_file_limit: "800" } },
        { name: "user", args: { ...USER_RULE, disk_limit: "100MB", soft_disk_limit: "80MB", file_limit: "100", perform_user_mapping: false } },
        { name: "user again", args: { ...USER_RULE, disk_limit: "100MB", soft_disk_limit: "80MB", file_limit: "100", perform_user_mapping: false } },
        { name: "group", args: { ...GROUP, disk_limit: "2GB", soft_disk_limit: "1536MB", file_limit: "2000", soft_file_limit: "1500" } },
        { name: "group again", args: { ...GROUP, disk_limit: "2GB", soft_disk_limit: "1536MB", file_limit: "2000", soft_file_limit: "1500" } },
      ]);
      expect(r.get("tree")).toMatchObject({ changed: true, actions: "create", modify_quota_status: "quota-on" });
      for (const step of ["user", "group"]) expect(r.get(step), step).toMatchObject({ changed: true, actions: "create", modify_quota_status: null });
      for (const step of ["tree again", "user again", "group again"]) {
        expect(r.get(step), step).toMatchObject({ changed: false });
        expect(r.get(step)?.actions, step).toBeUndefined();
      }
      for (const [step, res] of r) expect(res.warnings ?? [], step).toEqual([]);

      const [tree] = await treeRules();
      expect(await treeRules()).toHaveLength(1);
      expect(limits(tree)).toEqual({ space: { hard_limit: 1024 ** 3, soft_limit: 800 * 1024 ** 2 }, files: { hard_limit: 1000, soft_limit: 800 } });
      const users = await userRules();
      expect(users).toHaveLength(1);
      expect(users[0].qtree).toBeUndefined();
      expect(users[0].users).toEqual([{ name: "user1" }]);
      expect(users[0].user_mapping).toBe(false);
      expect(limits(users[0])).toEqual({ space: { hard_limit: 100 * 1024 ** 2, soft_limit: 80 * 1024 ** 2 }, files: { hard_limit: 100, soft_limit: undefined } });
      expect(users[0].files).not.toHaveProperty("soft_limit");
      const groups = await groupRules();
      expect(groups).toHaveLength(1);
      expect(groups[0].qtree.name).toBe("qt1");
      expect(limits(groups[0])).toEqual({ space: { hard_limit: 2 * 1024 ** 3, soft_limit: 1536 * 1024 ** 2 }, files: { hard_limit: 2000, soft_limit: 1500 } });

      expect((await volume()).quota).toEqual({ enabled: true, state: "on" });
      const rep = await reports();
      expect(reportFor(rep, isTreeQt1).map(limits)).toEqual([limits(tree)]);
      expect(reportFor(rep, isUser1).map(limits)).toEqual([limits(users[0])]);
      expect(reportFor(rep, isGroup1).map(limits)).toEqual([limits(groups[0])]);
    });

    await step("modifies limits (PATCH with only the changed keys), and a second run changes nothing", async () => {
      const r = await playbook("modify", [
        { name: "tree", args: { ...TREE, disk_limit: "2GB", soft_disk_limit: "800MB", file_limit: "1500", soft_file_limit: "-" } },
        { name: "tree again", args: { ...TREE, disk_limit: "2GB", soft_disk_limit: "800MB", file_limit: "1500", soft_file_limit: "-" } },
        // 1500 bytes: the module rounds up to 2048 itself, and the server keeps exactly that.
        { name: "user", args: { ...USER_RULE, disk_limit: "1500b", soft_disk_limit: "80MB", file_limit: "-1", perform_user_mapping: false } },
        { name: "user again", args: { ...USER_RULE, disk_limit: "1500b", soft_disk_limit: "80MB", file_limit: "-1", perform_user_mapping: false } },
        { name: "group", args: { ...GROUP, disk_limit: "2GB", soft_disk_limit: "1536MB", file_limit: "2500", soft_file_limit: "1500" } },
        { name: "group again", args: { ...GROUP, disk_limit: "2GB", soft_disk_limit: "1536MB", file_limit: "2500", soft_file_limit: "1500" } },
      ]);
      expect(r.get("tree")).toMatchObject({ changed: true, modify: { disk_limit: String(2 * 1024 ** 3), file_limit: "1500", soft_file_limit: "-" } });
      expect(Object.keys(r.get("tree")!.modify!).sort()).toEqual(["disk_limit", "file_limit", "soft_file_limit"]);
      expect(r.get("user")).toMatchObject({ changed: true, modify: { disk_limit: "2048", file_limit: "-" } });
      expect(Object.keys(r.get("user")!.modify!).sort()).toEqual(["disk_limit", "file_limit"]);
      expect(r.get("group")).toMatchObject({ changed: true, modify: { file_limit: "2500" } });
      expect(Object.keys(r.get("group")!.modify!)).toEqual(["file_limit"]);
      for (const step of ["tree again", "user again", "group again"]) {
        expect(r.get(step), step).toMatchObject({ changed: false });
        expect(r.get(step)?.modify, step).toBeUndefined();
      }

      const [tree] = await treeRules();
      expect(limits(tree)).toEqual({ space: { hard_limit: 2 * 1024 ** 3, soft_limit: 800 * 1024 ** 2 }, files: { hard_limit: 1500, soft_limit: undefined } });
      expect(tree.files).not.toHaveProperty("soft_limit"); // unlimited is omitted, never -1 or 0
      const [user] = await userRules();
      expect(limits(user)).toEqual({ space: { hard_limit: 2048, soft_limit: 80 * 1024 ** 2 }, files: UNLIMITED });
      expect(user).not.toHaveProperty("files");
      const [group] = await groupRules();
      expect(group.files).toEqual({ hard_limit: 2500, soft_limit: 1500 });

      // Quota was on: each PATCH resized, so the enforced limits follow the rules.
      expect((await volume()).quota).toEqual({ enabled: true, state: "on" });
      const rep = await reports();
      expect(reportFor(rep, isTreeQt1).map(limits)).toEqual([limits(tree)]);
      expect(reportFor(rep, isUser1).map(limits)).toEqual([limits(user)]);
      expect(reportFor(rep, isGroup1).map(limits)).toEqual([limits(group)]);
    });

    await step("deletes each rule (state: absent), and a second run changes nothing", async () => {
      const absent = { state: "absent" };
      const r = await playbook("delete", [
        { name: "tree", args: { ...TREE, ...absent } },
        { name: "tree again", args: { ...TREE, ...absent } },
        { name: "user", args: { ...USER_RULE, ...absent } },
        { name: "user again", args: { ...USER_RULE, ...absent } },
        { name: "group", args: { ...GROUP, ...absent } },
        { name: "group again", args: { ...GROUP, ...absent } },
      ]);
      for (const step of ["tree", "user", "group"]) expect(r.get(step), step).toMatchObject({ changed: true, actions: "delete" });
      for (const step of ["tree again", "user again", "group again"]) {
        expect(r.get(step), step).toMatchObject({ changed: false });
        expect(r.get(step)?.actions, step).toBeUndefined();
      }

      expect(await treeRules()).toEqual([]);
      expect(await userRules()).toEqual([]);
      expect(await groupRules()).toEqual([]);
      // Quota stays on (set_quota_status: true) and enforcement no longer carries the deleted rules.
      expect((await volume()).quota).toEqual({ enabled: true, state: "on" });
      const rep = await reports();
      expect(rep.filter((x) => isTreeQt1(x) || isUser1(x) || isGroup1(x))).toEqual([]);
    });
  }, 360_000);
});
