-- CreateEnum
CREATE TYPE "RecordingFormat" AS ENUM ('source', 'source_opus', 'mp4');

-- CreateEnum
CREATE TYPE "RecordingTrack" AS ENUM ('video', 'audio');

-- AlterEnum
ALTER TYPE "RecordingMode" ADD VALUE 'passthrough';

-- AlterEnum
ALTER TYPE "RecordingModeSetting" ADD VALUE 'passthrough';

-- AlterTable
ALTER TABLE "App" ADD COLUMN     "recordingFormat" "RecordingFormat" NOT NULL DEFAULT 'source';

-- CreateTable
CREATE TABLE "RecordingEgress" (
    "recordingId" TEXT NOT NULL,
    "track" "RecordingTrack" NOT NULL,
    "trackSid" TEXT NOT NULL,
    "egressId" TEXT,
    "state" TEXT NOT NULL DEFAULT 'starting',
    "startedAt" TIMESTAMP(3),
    "endedAt" TIMESTAMP(3),
    "location" TEXT NOT NULL,
    "error" TEXT,
    "attempt" INTEGER NOT NULL DEFAULT 0,
    "requestedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "RecordingEgress_pkey" PRIMARY KEY ("recordingId","track")
);

-- CreateIndex
CREATE UNIQUE INDEX "RecordingEgress_egressId_key" ON "RecordingEgress"("egressId");

-- AddForeignKey
ALTER TABLE "RecordingEgress" ADD CONSTRAINT "RecordingEgress_recordingId_fkey" FOREIGN KEY ("recordingId") REFERENCES "Recording"("id") ON DELETE CASCADE ON UPDATE CASCADE;
