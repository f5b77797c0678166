-- CreateEnum
CREATE TYPE "HlsStatus" AS ENUM ('starting', 'live', 'stopped', 'failed');

-- CreateTable
CREATE TABLE "HlsSession" (
    "id" TEXT NOT NULL,
    "appId" TEXT NOT NULL,
    "streamId" TEXT NOT NULL,
    "mode" TEXT NOT NULL,
    "preset" TEXT NOT NULL,
    "segmentS" INTEGER NOT NULL,
    "audio" BOOLEAN NOT NULL,
    "status" "HlsStatus" NOT NULL DEFAULT 'starting',
    "egressId" TEXT,
    "nodeId" TEXT NOT NULL,
    "dir" TEXT NOT NULL,
    "error" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "stoppedAt" TIMESTAMP(3),
    "purgeAt" TIMESTAMP(3),
    "purgedAt" TIMESTAMP(3),

    CONSTRAINT "HlsSession_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "HlsSession_appId_streamId_idx" ON "HlsSession"("appId", "streamId");

-- CreateIndex
CREATE INDEX "HlsSession_purgeAt_purgedAt_idx" ON "HlsSession"("purgeAt", "purgedAt");

-- AddForeignKey
ALTER TABLE "HlsSession" ADD CONSTRAINT "HlsSession_appId_fkey" FOREIGN KEY ("appId") REFERENCES "App"("id") ON DELETE CASCADE ON UPDATE CASCADE;
