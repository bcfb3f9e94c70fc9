import { InvalidInputError } from "../../platform/errors.js";
import { expandDottedKeys, invalid, rejectUnknown, toBigInt, toBool, toStr, unexpected, type Shape } from "../ontap/body.js";
import { CODES } from "../ontap/codes.js";

/**
 * Quota rule request bodies: nested JSON or Ansible's flat dotted keys with numbers as strings. Produces the
 * normalised input of the operations, enforcing the type-specific rules of the spec and the reference.
 */
export const RULE_TYPES = ["user", "group", "tree"] as const;
export type RuleType = (typeof RULE_TYPES)[number];

const ref = { name: true, uuid: true } as const;
const limits = { hard_limit: true, soft_limit: true } as const;
const POST_SHAPE: Shape = {
  svm: ref,
  volume: ref,
  type: true,
  qtree: { name: true, id: true },
  users: [{ name: true, id: true }],
  group: { name: true, id: true },
  user_mapping: true,
  space: limits,
  files: limits,
};
const PATCH_SHAPE: Shape = { space: limits, files: limits, user_mapping: true };

/** A limit: undefined = not given, null = unlimited ("-", -1, "-1" or null), else a non-negative integer. */
export type Limit = bigint | null | undefined;

export interface LimitsInput {
  spaceHardLimit: Limit;
  spaceSoftLimit: Limit;
  filesHardLimit: Limit;
  filesSoftLimit: Limit;
  userMapping?: boolean;
}

export interface CreateRuleInput extends LimitsInput {
  svm: { name?: string; uuid?: string };
  volume: { name?: string; uuid?: string };
  type: RuleType;
  /** null: volume-level user/group rule. */
  qtreeName: string | null;
  users: { name: string | null; userId: string | null }[];
  group: { name: string | null; id: string | null } | null;
}

function parseLimit(name: string, v: unknown, space: boolean): Limit {
  if (v === undefined) return undefined;
  if (v === null || v === "-" || v === -1 || v === "-1") return null;
  const n = toBigInt(name, v);
  if (n < 0n) throw invalid(name, "a non-negative integer, or -1 / \"-\" for unlimited");
  // Space is kept in whole KiB: values are rounded up (never down); 1..1023 become 1024.
  return space ? ((n + 1023n) / 1024n) * 1024n : n;
}

function parseLimits(body: Record<string, any>): LimitsInput {
  return {
    spaceHardLimit: parseLimit("space.hard_limit", body.space?.hard_limit, true),
    spaceSoftLimit: parseLimit("space.soft_limit", body.space?.soft_limit, true),
    filesHardLimit: parseLimit("files.hard_limit", body.files?.hard_limit, false),
    filesSoftLimit: parseLimit("files.soft_limit", body.files?.soft_limit, false),
  };
}

const badCombination = (message: string, target: string) => new InvalidInputError(message, { code: CODES.badCombination, target });
const missing = (field: string) => new InvalidInputError(`Missing required field "${field}".`, { code: CODES.missingField, target: field });

function refOf(name: string, v: Record<string, unknown> | undefined) {
  return {
    ...(v?.name !== undefined ? { name: toStr(`${name}.name`, v.name) } : {}),
    ...(v?.uuid !== undefined ? { uuid: toStr(`${name}.uuid`, v.uuid) } : {}),
  };
}

/** A purely numeric user name is a UID: stored and reported as an id (what Ansible expects). */
function parseUsers(list: Record<string, unknown>[] | undefined) {
  if (!list?.length) throw missing("users");
  const users = list.map((u, i) => {
    const hasName = u.name !== undefined;
    const hasId = u.id !== undefined;
    if (hasName === hasId) throw badCombination("Each user must have either a name or an id, not both.", `users[${i}]`);
    const value = toStr(hasName ? "users.name" : "users.id", hasName ? u.name : u.id);
    if (hasId && !/^\d+$/.test(value)) throw invalid("users.id", "a numeric user id");
    return hasId || /^\d+$/.test(value) ? { name: null, userId: value } : { name: value, userId: null };
  });
  if (users.length > 1 && users.some((u) => u.name === "")) {
    throw badCombination("A default user rule (empty user name) cannot list other users.", "users");
  }
  return users;
}

export function parseCreateRule(raw: unknown): CreateRuleInput {
  const body = expandDottedKeys(raw, ["users"]) as Record<string, any>;
  rejectUnknown(body, POST_SHAPE);
  if (body.type === undefined) throw missing("type");
  const type = toStr("type", body.type) as RuleType;
  if (!RULE_TYPES.includes(type)) throw invalid("type", "one of user, group, tree");
  if (body.qtree?.id !== undefined) throw unexpected("qtree.id");
  const qtreeName = body.qtree?.name === undefined ? undefined : toStr("qtree.name", body.qtree.name);

  if (type !== "user" && body.users !== undefined) throw badCombination(`"users" is only valid for user rules.`, "users");
  if (type !== "group" && body.group !== undefined) throw badCombination(`"group" is only valid for group rules.`, "group");
  if (type !== "user" && body.user_mapping !== undefined) throw badCombination(`"user_mapping" is only valid for user rules.`, "user_mapping");
  if (type === "tree" && qtreeName === undefined) throw missing("qtree.name");

  let group: CreateRuleInput["group"] = null;
  if (type === "group") {
    if (!body.group) throw missing("group");
    if (body.group.name !== undefined && body.group.id !== undefined) {
      throw badCombination("Specify either group.name or group.id, not both.", "group");
    }
    if (body.group.name === undefined && body.group.id === undefined) throw missing("group.name");
    group = body.group.name !== undefined ? { name: toStr("group.name", body.group.name), id: null } : { name: null, id: toStr("group.id", body.group.id) };
  }
  return {
    svm: refOf("svm", body.svm),
    volume: refOf("volume", body.volume),
    type,
    // For user and group rules an empty qtree name (what Ansible sends) means "volume level".
    qtreeName: type === "tree" ? qtreeName! : qtreeName ? qtreeName : null,
    users: type === "user" ? parseUsers(body.users) : [],
    group,
    ...parseLimits(body),
    ...(body.user_mapping !== undefined ? { userMapping: toBool("user_mapping", body.user_mapping) } : {}),
  };
}

export function parsePatchRule(raw: unknown): LimitsInput {
  const body = expandDottedKeys(raw, []) as Record<string, any>;
  rejectUnknown(body, PATCH_SHAPE);
  return {
    ...parseLimits(body),
    ...(body.user_mapping !== undefined ? { userMapping: toBool("user_mapping", body.user_mapping) } : {}),
  };
}
