export { createPrismaClient, PrismaService } from './prisma.service.js';
export { runMigrations } from './migrate/run-migrations.js';
export { isPostgresUnavailable } from './postgres-unavailable.js';
// PrismaClient, the Prisma namespace, model types and enums, generated from prisma/schema.prisma.
export * from './generated/client.js';
