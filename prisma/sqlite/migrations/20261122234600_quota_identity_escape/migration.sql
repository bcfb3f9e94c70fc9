-- Quota rule identities: user names are now escaped ("%" -> "%25", "," -> "%2C", see src/storage/quota-rules/identity.ts)
-- so one user named "a,name:b" and the two users a and b no longer share an identity. Only user rules with such a
-- name change key. Two steps: parking the keys first means no intermediate key can collide with an old one.
UPDATE "QuotaRule" SET "identity" = 'rekey:' || "uuid"
WHERE "type" = 'user' AND EXISTS (
  SELECT 1 FROM "QuotaRuleUser" u WHERE u."ruleUuid" = "QuotaRule"."uuid" AND (instr(u."name", '%') > 0 OR instr(u."name", ',') > 0)
);
UPDATE "QuotaRule" SET "identity" = 'user|' || CASE WHEN "qtreeName" IS NULL THEN 'volume' ELSE 'qtree:' || "qtreeName" END || '|' || (
  SELECT group_concat(p.part, ',' ORDER BY p.part) FROM (
    SELECT CASE WHEN u."userId" IS NOT NULL THEN 'id:' || u."userId"
                ELSE 'name:' || replace(replace(u."name", '%', '%25'), ',', '%2C') END AS part
    FROM "QuotaRuleUser" u WHERE u."ruleUuid" = "QuotaRule"."uuid"
  ) p
)
WHERE "identity" LIKE 'rekey:%';
