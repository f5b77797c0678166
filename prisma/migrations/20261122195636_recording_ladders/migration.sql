-- CreateEnum
CREATE TYPE "LadderStatus" AS ENUM ('queued', 'running', 'ready', 'failed');

-- CreateEnum
CREATE TYPE "LadderEncoder" AS ENUM ('nvenc', 'x264');

-- AlterTable
ALTER TABLE "App" ADD COLUMN     "transcodeLadder" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "Recording" ADD COLUMN     "ladderAttempt" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "ladderEncoder" "LadderEncoder",
ADD COLUMN     "ladderError" TEXT,
ADD COLUMN     "ladderNodeId" TEXT,
ADD COLUMN     "ladderRenditions" JSONB,
ADD COLUMN     "ladderStatus" "LadderStatus";
