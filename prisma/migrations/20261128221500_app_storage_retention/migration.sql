-- AlterTable
ALTER TABLE "App" ADD COLUMN     "maxRecordingDurationS" INTEGER,
ADD COLUMN     "maxStorageMb" INTEGER,
ADD COLUMN     "recordingRetentionDays" INTEGER;

-- CreateIndex
CREATE INDEX "Recording_status_endedAt_idx" ON "Recording"("status", "endedAt");
