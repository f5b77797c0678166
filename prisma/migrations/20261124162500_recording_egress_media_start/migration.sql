-- AlterTable
ALTER TABLE "RecordingEgress" ADD COLUMN     "mediaStartedAt" TIMESTAMP(3);
