-- AlterTable
ALTER TABLE "App" ADD COLUMN     "publicCameras" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "Camera" (
    "id" TEXT NOT NULL,
    "appId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "maxFps" INTEGER NOT NULL,
    "maxFrameKb" INTEGER NOT NULL,
    "keyHash" TEXT NOT NULL,
    "nodeId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deletedAt" TIMESTAMP(3),

    CONSTRAINT "Camera_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Camera_keyHash_key" ON "Camera"("keyHash");

-- CreateIndex
CREATE INDEX "Camera_appId_deletedAt_idx" ON "Camera"("appId", "deletedAt");

-- AddForeignKey
ALTER TABLE "Camera" ADD CONSTRAINT "Camera_appId_fkey" FOREIGN KEY ("appId") REFERENCES "App"("id") ON DELETE CASCADE ON UPDATE CASCADE;
