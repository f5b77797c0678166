-- CreateTable
CREATE TABLE "UsageInterval" (
    "id" TEXT NOT NULL,
    "appId" TEXT NOT NULL,
    "meter" TEXT NOT NULL,
    "dimension" TEXT NOT NULL DEFAULT '',
    "weight" DOUBLE PRECISION NOT NULL DEFAULT 1,
    "source" TEXT,
    "startedAt" TIMESTAMP(3),
    "endedAt" TIMESTAMP(3),
    "lastSeenAt" TIMESTAMP(3),
    "changedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "UsageInterval_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "UsageHour" (
    "appId" TEXT NOT NULL,
    "meter" TEXT NOT NULL,
    "dimension" TEXT NOT NULL,
    "hour" TIMESTAMP(3) NOT NULL,
    "quantity" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "UsageHour_pkey" PRIMARY KEY ("appId","hour","meter","dimension")
);

-- CreateTable
CREATE TABLE "UsageTotal" (
    "appId" TEXT NOT NULL,
    "meter" TEXT NOT NULL,
    "dimension" TEXT NOT NULL,
    "quantity" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "UsageTotal_pkey" PRIMARY KEY ("appId","meter","dimension")
);

-- CreateTable
CREATE TABLE "UsageCursor" (
    "id" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "UsageCursor_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "UsageInterval_appId_startedAt_idx" ON "UsageInterval"("appId", "startedAt");

-- CreateIndex
CREATE INDEX "UsageInterval_meter_endedAt_idx" ON "UsageInterval"("meter", "endedAt");

-- CreateIndex
CREATE INDEX "UsageInterval_endedAt_idx" ON "UsageInterval"("endedAt");

-- CreateIndex
CREATE INDEX "UsageInterval_changedAt_idx" ON "UsageInterval"("changedAt");

-- CreateIndex
CREATE INDEX "UsageHour_hour_idx" ON "UsageHour"("hour");
