// Type-level check, run by `npm run typecheck`: the dashboard's copies of the API types
// (src/api/types.ts, kept free of node-only code) must match what libs/contracts infers.
import type * as Contracts from '@tally/contracts';
import type * as Dashboard from '../src/api/types.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;

export type ContractChecks = [
  Assert<Same<Dashboard.StreamView, Contracts.StreamView>>,
  Assert<Same<Dashboard.StreamList, Contracts.StreamList>>,
  Assert<Same<Dashboard.StreamToken, Contracts.StreamToken>>,
  Assert<Same<Dashboard.AppView, Contracts.AppView>>,
  Assert<Same<Dashboard.AppList, Contracts.AppList>>,
  Assert<Same<Dashboard.AppQuotas, Contracts.AppQuotas>>,
  Assert<Same<Dashboard.QuotaOverrides, Contracts.QuotaOverrides>>,
  Assert<Same<Dashboard.AppSettingsPatch, Contracts.UpdateAppBody>>,
  Assert<Same<Dashboard.CreatedApiKey, Contracts.CreatedApiKey>>,
  Assert<Same<Dashboard.AppUsageView, Contracts.AppUsageView>>,
  Assert<Same<Dashboard.WorkloadKind, Contracts.WorkloadKind>>,
  Assert<Same<Dashboard.CapacityCheckResult, Contracts.CapacityCheckResult>>,
  Assert<Same<Dashboard.CapacityView, Contracts.CapacityView>>,
  Assert<Same<Dashboard.NodeStatus, Contracts.NodeStatus>>,
  Assert<Same<Dashboard.NodeList, Contracts.NodeList>>,
  Assert<Same<Dashboard.RecordingMode, Contracts.RecordingMode>>,
  Assert<Same<Dashboard.RecordingModeSetting, Contracts.RecordingModeSetting>>,
  Assert<Same<Dashboard.RecordingView, Contracts.RecordingView>>,
  Assert<Same<Dashboard.RecordingList, Contracts.RecordingList>>,
  Assert<Same<Dashboard.StartRecordingBody, Contracts.StartRecordingBody>>,
  Assert<Same<Dashboard.WebhookEventType, Contracts.WebhookEventType>>,
  Assert<Same<Dashboard.WebhookDeliveryView, Contracts.WebhookDeliveryView>>,
  Assert<Same<Dashboard.WebhookDeliveryList, Contracts.WebhookDeliveryList>>,
  Assert<Same<Dashboard.WebhookSecretView, Contracts.WebhookSecretView>>,
  Assert<Same<Dashboard.WebhookEndpointView, Contracts.WebhookEndpointView>>,
  Assert<Same<Dashboard.CameraView, Contracts.CameraView>>,
  Assert<Same<Dashboard.CreatedCamera, Contracts.CreatedCamera>>,
  Assert<Same<Dashboard.CameraList, Contracts.CameraList>>,
  Assert<Same<Dashboard.CreateCameraBody, Contracts.CreateCameraBody>>,
  Assert<Same<Dashboard.CameraToken, Contracts.CameraToken>>,
  Assert<Same<Dashboard.HlsView, Contracts.HlsView>>,
  Assert<Same<Dashboard.JoinedNodeRole, Contracts.JoinedNodeRole>>,
  Assert<Same<Dashboard.CreateJoinTokenBody, Contracts.CreateJoinTokenBody>>,
  Assert<Same<Dashboard.JoinTokenView, Contracts.JoinTokenView>>,
  Assert<Same<Dashboard.ErrorCode, Contracts.ErrorCode>>,
  Assert<Same<Pick<Dashboard.ErrorBody['error'], keyof Contracts.ErrorBody['error']>, Contracts.ErrorBody['error']>>,
  Assert<Contracts.LimitRefusal['error'] extends Dashboard.ErrorBody['error'] ? true : false>,
];
