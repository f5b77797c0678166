#!/usr/bin/env bash
# Generates the Prisma client from prisma/schema.prisma into libs/db/src/generated (gitignored).
# Works offline and without npm install scripts: generation needs no native engine, so the
# engine download is pointed at /bin/true and telemetry/update checks are off.
#
# Usage: bash scripts/db-generate.sh   (or: npm run db:generate)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
prisma="$root/node_modules/.bin/prisma"
if [[ ! -x "$prisma" ]]; then
  echo "db-generate: $prisma not found; run npm install first" >&2
  exit 1
fi

export PRISMA_SCHEMA_ENGINE_BINARY=/bin/true
export CHECKPOINT_DISABLE=1
export PRISMA_HIDE_UPDATE_MESSAGE=1

cd "$root"
"$prisma" generate --schema prisma/schema.prisma
