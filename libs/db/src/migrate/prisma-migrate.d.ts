declare module '@prisma/migrate' {
  export * from '@prisma/migrate/dist/src/index.js';
}
