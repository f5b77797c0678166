import type { AppView } from '@tally/contracts';
import type { ReactNode } from 'react';
import { AppsPanel } from './admin-apps.js';
import { JoinNodePanel } from './admin-join.js';
import { NodesPanel } from './admin-nodes.js';
import { TopAppsPanel } from './admin-top-apps.js';
import { WhatIfPanel } from './admin-what-if.js';

/** The operator's view: nodes and their budgets, adding a node, admission what-ifs, apps, the apps that use most. */
export function AdminPage({ apps }: { apps: AppView[] }): ReactNode {
  return (
    <div className="stack">
      <NodesPanel />
      <JoinNodePanel />
      <WhatIfPanel apps={apps} />
      <AppsPanel />
      <TopAppsPanel apps={apps} />
    </div>
  );
}
