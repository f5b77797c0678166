-- AlterTable
ALTER TABLE "App" ADD COLUMN     "webhookSecretPrevious" TEXT,
ADD COLUMN     "webhookSecretPreviousUntil" TIMESTAMP(3);
