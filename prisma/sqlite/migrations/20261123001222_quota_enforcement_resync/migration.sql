-- Before start-up recovery existed, a crash between a rule change and its resize left a volume "on" with a stale
-- enforced copy, invisibly. Marking every volume with quota on as resizing makes the next start rebuild each copy
-- from the committed rules once (src/storage/volumes/enforcement.ts, recoverEnforcement), healing such volumes.
UPDATE "Volume" SET "quotaState" = 'resizing' WHERE "quotaEnabled" = 1 AND "quotaState" = 'on';
