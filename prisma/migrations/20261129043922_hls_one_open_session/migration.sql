-- At most one open (starting or live) HLS session per stream: concurrent starts cannot both open one.
-- Hand-written: prisma/schema.prisma notes it in a comment on HlsSession.
CREATE UNIQUE INDEX "HlsSession_one_open_per_stream" ON "HlsSession"("appId", "streamId") WHERE status IN ('starting', 'live');
