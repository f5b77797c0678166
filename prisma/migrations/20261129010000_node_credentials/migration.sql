-- CreateTable
CREATE TABLE "NodeCredential" (
    "nodeId" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "redisPasswordSha256" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "NodeCredential_pkey" PRIMARY KEY ("nodeId")
);
