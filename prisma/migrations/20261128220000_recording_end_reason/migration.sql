-- AlterTable
ALTER TABLE "Recording" ADD COLUMN     "endReason" TEXT;
