export { newId, type IdPrefix } from '@tally/contracts';
