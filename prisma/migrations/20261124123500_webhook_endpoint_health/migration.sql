-- AlterTable
ALTER TABLE "App" ADD COLUMN     "webhookDisabledAt" TIMESTAMP(3),
ADD COLUMN     "webhookDisabledReason" TEXT,
ADD COLUMN     "webhookFailingSince" TIMESTAMP(3);

-- CreateIndex
CREATE INDEX "LivekitEvent_receivedAt_idx" ON "LivekitEvent"("receivedAt");

-- CreateIndex
CREATE INDEX "WebhookEvent_createdAt_idx" ON "WebhookEvent"("createdAt");
