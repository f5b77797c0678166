-- AlterTable
ALTER TABLE "Recording" ADD COLUMN     "uploadError" TEXT;
