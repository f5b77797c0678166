import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

export const DEFAULT_SCHEMA_PATH = resolve(repoRoot, 'prisma/schema.prisma');
export const DEFAULT_MIGRATIONS_DIR = resolve(repoRoot, 'prisma/migrations');
