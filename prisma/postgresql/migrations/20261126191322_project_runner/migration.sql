-- AlterTable
ALTER TABLE "Project" ADD COLUMN     "runnerId" TEXT;

-- CreateIndex
CREATE INDEX "Project_runnerId_idx" ON "Project"("runnerId");
