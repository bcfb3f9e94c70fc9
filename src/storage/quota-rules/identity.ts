/**
 * A rule is identified by its volume, type, qtree scope and target. The identity string is unique per volume
 * (a database constraint), which rejects duplicates even under concurrent creates.
 */
export interface RuleTarget {
  type: string;
  qtreeName: string | null;
  groupName: string | null;
  groupId: string | null;
}

export interface UserTarget {
  name: string | null;
  userId: string | null;
}

/**
 * User names are joined with "," so a name containing "," could forge a list ("a,name:b" vs the users a and b):
 * "%" and "," are percent-escaped, which makes the encoding injective. Names without either — all names ONTAP
 * clients send — encode as they always did; migration 20261122234600_quota_identity_escape re-keyed the others.
 */
const escapeUserName = (name: string) => name.replaceAll("%", "%25").replaceAll(",", "%2C");

export function ruleIdentity(rule: RuleTarget, users: UserTarget[]): string {
  const scope = rule.qtreeName === null ? "volume" : `qtree:${rule.qtreeName}`;
  switch (rule.type) {
    case "tree":
      return `tree|${rule.qtreeName}`;
    case "group":
      return `group|${scope}|${rule.groupId !== null ? `id:${rule.groupId}` : `name:${rule.groupName}`}`;
    default:
      return `user|${scope}|${users
        .map((u) => (u.userId !== null ? `id:${u.userId}` : `name:${escapeUserName(u.name ?? "")}`))
        .sort()
        .join(",")}`;
  }
}

/** Default rules have an empty target: users [""], group "", or qtree "" for tree rules. */
export function isDefaultRule(rule: RuleTarget, users: UserTarget[]): boolean {
  if (rule.type === "tree") return rule.qtreeName === "";
  if (rule.type === "group") return rule.groupName === "";
  return users.length === 1 && users[0].name === "";
}
