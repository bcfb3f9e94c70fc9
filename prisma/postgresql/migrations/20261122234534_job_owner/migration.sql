-- AlterTable
ALTER TABLE "Job" ADD COLUMN     "owner" TEXT;
