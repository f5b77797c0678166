import {
  AppParams,
  ErrorBody,
  RotateWebhookSecretBody,
  WebhookDeliveryList,
  WebhookDeliveryListQuery,
  WebhookDeliveryParams,
  WebhookDeliveryView,
  WebhookEndpointView,
  WebhookSecretView,
} from '@tally/contracts';
import { errors, type RouteSpec } from './route-spec.js';

export const WEBHOOK_ROUTES: readonly RouteSpec[] = [
  {
    method: 'post',
    path: '/v1/apps/{appId}/webhook-secret',
    summary:
      "Rotate the app's webhook signing secret (shown once); the previous one keeps signing alongside for gracePeriodS (Standard Webhooks)",
    auth: 'app',
    params: AppParams,
    body: RotateWebhookSecretBody,
    responses: { 201: WebhookSecretView, ...errors, 409: ErrorBody },
  },
  {
    method: 'get',
    path: '/v1/apps/{appId}/webhook-endpoint',
    summary: "The app's webhook endpoint: URL, enabled or disabled (and why), failing since, secrets",
    auth: 'app',
    params: AppParams,
    responses: { 200: WebhookEndpointView, ...errors },
  },
  {
    method: 'post',
    path: '/v1/apps/{appId}/webhook-endpoint/enable',
    summary: 'Re-enable a disabled webhook endpoint (deliveries are attempted again from now on)',
    auth: 'app',
    params: AppParams,
    responses: { 200: WebhookEndpointView, ...errors },
  },
  {
    method: 'get',
    path: '/v1/apps/{appId}/webhook-deliveries',
    summary: 'The webhook delivery log, newest first',
    auth: 'app',
    params: AppParams,
    query: WebhookDeliveryListQuery,
    responses: { 200: WebhookDeliveryList, ...errors },
  },
  {
    method: 'post',
    path: '/v1/apps/{appId}/webhook-deliveries/{deliveryId}/redeliver',
    summary: "Deliver the same event (same id) again, to the app's current webhook URL",
    auth: 'app',
    params: WebhookDeliveryParams,
    responses: { 202: WebhookDeliveryView, ...errors, 409: ErrorBody },
  },
];
