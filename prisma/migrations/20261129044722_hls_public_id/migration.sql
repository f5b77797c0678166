-- Each session's public playlist path: 128 random bits. Sessions from before get random ids too.
ALTER TABLE "HlsSession" ADD COLUMN "publicId" TEXT;
UPDATE "HlsSession" SET "publicId" = md5(gen_random_uuid()::text || clock_timestamp()::text || id);
ALTER TABLE "HlsSession" ALTER COLUMN "publicId" SET NOT NULL;

-- CreateIndex
CREATE UNIQUE INDEX "HlsSession_publicId_key" ON "HlsSession"("publicId");
