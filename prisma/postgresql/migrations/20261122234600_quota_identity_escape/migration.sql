-- Quota rule identities: user names are now escaped ("%" -> "%25", "," -> "%2C", see src/storage/quota-rules/identity.ts)
-- so one user named "a,name:b" and the two users a and b no longer share an identity. Only user rules with such a
-- name change key. Two steps: parking the keys first means no intermediate key can collide with an old one.
UPDATE "QuotaRule" SET "identity" = 'rekey:' || "uuid"
WHERE "type" = 'user' AND EXISTS (
  SELECT 1 FROM "QuotaRuleUser" u WHERE u."ruleUuid" = "QuotaRule"."uuid" AND (strpos(u."name", '%') > 0 OR strpos(u."name", ',') > 0)
);
UPDATE "QuotaRule" r SET "identity" = 'user|' || CASE WHEN r."qtreeName" IS NULL THEN 'volume' ELSE 'qtree:' || r."qtreeName" END || '|' || (
  SELECT string_agg(p.part, ',' ORDER BY p.part COLLATE "C") FROM (
    SELECT CASE WHEN u."userId" IS NOT NULL THEN 'id:' || u."userId"
                ELSE 'name:' || replace(replace(u."name", '%', '%25'), ',', '%2C') END AS part
    FROM "QuotaRuleUser" u WHERE u."ruleUuid" = r."uuid"
  ) p
)
WHERE r."identity" LIKE 'rekey:%';
