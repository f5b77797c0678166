export * from './slot-ledger.js';
export * from './capacity-ledger.js';
export * from './admitter.js';
