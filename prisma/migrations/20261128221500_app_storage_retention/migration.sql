-- AlterTable
ALTER TABLE "App" ADD COLUMN     "maxRecordingDurationS" INTEGER,
ADD COLUMN     "maxStorageMb" INTEGER,
ADD COLUMN     "recordingRetentionDays" INTEGER;

-- AlterTable
ALTER TABLE "Recording" ADD COLUMN     "endReason" TEXT;

-- CreateIndex
CREATE INDEX "Recording_status_endedAt_idx" ON "Recording"("status", "endedAt");
