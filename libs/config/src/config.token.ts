/** Nest injection token for the frozen Config object. */
export const CONFIG = Symbol('tally.config');
