import { SetMetadata } from '@nestjs/common';

export const ACCESS = 'tally:access';

/** Who may call a route: anyone, only the admin key, or the admin key and the key of the app in the path (the default). */
export type Access = 'public' | 'admin' | 'app';

/** Routes without a decorator need the admin key or the key of the app in the path. */
export const Public = () => SetMetadata(ACCESS, 'public' satisfies Access);
export const AdminOnly = () => SetMetadata(ACCESS, 'admin' satisfies Access);
