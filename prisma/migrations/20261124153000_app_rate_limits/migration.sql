-- AlterTable
ALTER TABLE "App" ADD COLUMN     "rateLimits" JSONB NOT NULL DEFAULT '{}';
