export * from './capacity-ledger.js';
export * from './capacity-ledger.keys.js';
export * from './admitter.js';
export * from './capacity-model.js';
export * from './app-policy.js';
export * from './camera-cost.js';
export * from './reservation-owner.js';
export * from './policy-cache.js';
