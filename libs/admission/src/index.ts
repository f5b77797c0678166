export * from './slot-ledger.js';
