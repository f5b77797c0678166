-- CreateEnum
CREATE TYPE "IngressKind" AS ENUM ('rtmp', 'whip');

-- CreateEnum
CREATE TYPE "IngressStatus" AS ENUM ('inactive', 'publishing', 'ended', 'error');

-- CreateTable
CREATE TABLE "Ingress" (
    "id" TEXT NOT NULL,
    "appId" TEXT NOT NULL,
    "streamId" TEXT NOT NULL,
    "kind" "IngressKind" NOT NULL,
    "transcode" BOOLEAN NOT NULL,
    "livekitIngressId" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "streamKeyHash" TEXT,
    "status" "IngressStatus" NOT NULL DEFAULT 'inactive',
    "error" TEXT,
    "nodeId" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "deletedAt" TIMESTAMP(3),

    CONSTRAINT "Ingress_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Ingress_livekitIngressId_key" ON "Ingress"("livekitIngressId");

-- CreateIndex
CREATE INDEX "Ingress_appId_deletedAt_idx" ON "Ingress"("appId", "deletedAt");

-- CreateIndex
CREATE INDEX "Ingress_streamId_idx" ON "Ingress"("streamId");

-- AddForeignKey
ALTER TABLE "Ingress" ADD CONSTRAINT "Ingress_appId_fkey" FOREIGN KEY ("appId") REFERENCES "App"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "Ingress" ADD CONSTRAINT "Ingress_streamId_fkey" FOREIGN KEY ("streamId") REFERENCES "Stream"("id") ON DELETE CASCADE ON UPDATE CASCADE;
