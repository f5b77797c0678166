import type { ReactNode } from 'react';
import type { Api } from '../api/client.js';
import type { AppView } from '../api/types.js';
import type { Navigate } from '../use-route.js';
import { AppsPanel, WhatIfPanel } from './admin-apps.js';
import { JoinNodePanel } from './admin-join.js';
import { NodesPanel } from './admin-nodes.js';

/** The operator's view: nodes and their budgets, adding a node, admission what-ifs, apps. */
export function AdminPage(props: { api: Api; apps: AppView[]; navigate: Navigate; onAppsChanged: () => void }): ReactNode {
  return (
    <div className="stack">
      <NodesPanel api={props.api} />
      <JoinNodePanel api={props.api} />
      <WhatIfPanel api={props.api} apps={props.apps} />
      <AppsPanel api={props.api} navigate={props.navigate} onChanged={props.onAppsChanged} />
    </div>
  );
}
