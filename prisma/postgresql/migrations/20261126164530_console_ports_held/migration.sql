-- DropIndex
DROP INDEX "Node_computeId_console_key";

-- AlterTable
ALTER TABLE "Node" ADD COLUMN     "consoleHeld" BOOLEAN;

-- CreateIndex
CREATE UNIQUE INDEX "Node_computeId_console_consoleHeld_key" ON "Node"("computeId", "console", "consoleHeld");

-- Until now every node held its console port for life. From here only nodes of open projects hold one: a closed
-- project's ports go back to the range and are taken again, re-checked, when it opens.
UPDATE "Node" SET "consoleHeld" = true WHERE "console" IS NOT NULL AND "projectId" IN (SELECT "id" FROM "Project" WHERE "status" = 'opened');
