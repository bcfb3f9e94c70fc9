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

export function ruleIdentity(rule: RuleTarget, users: UserTarget[]): string {
  const scope = rule.qtreeName === null ? "volume" : `qtree:${rule.qtreeName}`;
  switch (rule.type) {
    case "tree":
      return `tree|${rule.qtreeName}`;
    case "group":
      return `group|${scope}|${rule.groupId !== null ? `id:${rule.groupId}` : `name:${rule.groupName}`}`;
    default:
      return `user|${scope}|${users
        .map((u) => (u.userId !== null ? `id:${u.userId}` : `name:${u.name}`))
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
