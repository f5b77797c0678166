-- AlterTable
ALTER TABLE "WebhookDelivery" ADD COLUMN     "leaseOwner" TEXT,
ADD COLUMN     "leasedUntil" TIMESTAMP(3);

-- CreateIndex
CREATE INDEX "WebhookDelivery_status_appId_nextAttemptAt_idx" ON "WebhookDelivery"("status", "appId", "nextAttemptAt");
