-- CreateEnum
CREATE TYPE "RecordingModeSetting" AS ENUM ('auto', 'room_composite', 'track_composite', 'track');

-- CreateEnum
CREATE TYPE "RecordingMode" AS ENUM ('room_composite', 'track_composite', 'track');

-- CreateEnum
CREATE TYPE "RecordingStatus" AS ENUM ('starting', 'active', 'ending', 'complete', 'failed');

-- CreateEnum
CREATE TYPE "DeliveryStatus" AS ENUM ('pending', 'delivered', 'dead');

-- AlterTable
ALTER TABLE "App" ADD COLUMN     "recordingFallback" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "recordingMode" "RecordingModeSetting" NOT NULL DEFAULT 'auto',
ADD COLUMN     "webhookSecret" TEXT,
ADD COLUMN     "webhookUrl" TEXT;

-- CreateTable
CREATE TABLE "Recording" (
    "id" TEXT NOT NULL,
    "appId" TEXT NOT NULL,
    "streamId" TEXT NOT NULL,
    "mode" "RecordingMode" NOT NULL,
    "status" "RecordingStatus" NOT NULL DEFAULT 'starting',
    "reason" TEXT NOT NULL,
    "layout" TEXT,
    "nodeId" TEXT NOT NULL,
    "egressId" TEXT,
    "storage" TEXT NOT NULL,
    "location" TEXT NOT NULL,
    "sizeBytes" BIGINT,
    "durationS" DOUBLE PRECISION,
    "sha256" TEXT,
    "codecs" JSONB,
    "error" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMP(3),
    "endedAt" TIMESTAMP(3),
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Recording_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "WebhookEvent" (
    "id" TEXT NOT NULL,
    "appId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "WebhookEvent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "WebhookDelivery" (
    "id" TEXT NOT NULL,
    "appId" TEXT NOT NULL,
    "eventId" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "status" "DeliveryStatus" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lastStatusCode" INTEGER,
    "lastError" TEXT,
    "lastAttemptAt" TIMESTAMP(3),
    "nextAttemptAt" TIMESTAMP(3),
    "deliveredAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "WebhookDelivery_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Recording_egressId_key" ON "Recording"("egressId");

-- CreateIndex
CREATE INDEX "Recording_appId_status_idx" ON "Recording"("appId", "status");

-- CreateIndex
CREATE INDEX "Recording_streamId_idx" ON "Recording"("streamId");

-- CreateIndex
CREATE INDEX "Recording_status_idx" ON "Recording"("status");

-- CreateIndex
CREATE INDEX "WebhookEvent_appId_createdAt_idx" ON "WebhookEvent"("appId", "createdAt");

-- CreateIndex
CREATE INDEX "WebhookDelivery_appId_createdAt_idx" ON "WebhookDelivery"("appId", "createdAt");

-- CreateIndex
CREATE INDEX "WebhookDelivery_status_createdAt_idx" ON "WebhookDelivery"("status", "createdAt");

-- AddForeignKey
ALTER TABLE "Recording" ADD CONSTRAINT "Recording_appId_fkey" FOREIGN KEY ("appId") REFERENCES "App"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Recording" ADD CONSTRAINT "Recording_streamId_fkey" FOREIGN KEY ("streamId") REFERENCES "Stream"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WebhookEvent" ADD CONSTRAINT "WebhookEvent_appId_fkey" FOREIGN KEY ("appId") REFERENCES "App"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "WebhookDelivery" ADD CONSTRAINT "WebhookDelivery_eventId_fkey" FOREIGN KEY ("eventId") REFERENCES "WebhookEvent"("id") ON DELETE CASCADE ON UPDATE CASCADE;
