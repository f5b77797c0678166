export * from './meters.js';
export * from './usage-cursors.js';
export * from './usage-intervals.js';
export * from './usage-reader.js';
export * from './usage-rollup.js';
export { type AppScope } from './usage-sql.js';
export * from './usage-events.js';
