import { applyDecorators, type CanActivate, createParamDecorator, type ExecutionContext, Injectable, UseGuards } from '@nestjs/common';
import type { Camera } from '@tally/db';
import { CameraParams } from '@tally/contracts';
import type { FastifyRequest } from 'fastify';
import { ZodPipe } from '../common/zod.pipe.js';
import { Public } from '../routes/access.js';
import { CameraViewersService, presentedCredential } from './camera-viewers.service.js';

type ViewerRequest = FastifyRequest & { viewedCamera?: Camera };

const CAMERA_PARAMS = new ZodPipe(CameraParams);

/**
 * Who may watch the camera in the path: a viewer token for it (Bearer or `?token=`), the app's key,
 * or anyone when the app made its cameras public. 404 for unknown ids (and other apps'), 401
 * otherwise, counted as a failed authentication of the client (429 past its budget).
 */
@Injectable()
export class CameraViewerGuard implements CanActivate {
  constructor(private readonly viewers: CameraViewersService) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<ViewerRequest>();
    // A malformed id is a 400 naming the field, before any credential is judged.
    const params = CAMERA_PARAMS.transform(request.params);
    const token = (request.query as Record<string, unknown> | undefined)?.['token'];
    const query = new URLSearchParams(typeof token === 'string' ? { token } : {});
    const credential = presentedCredential(request.headers.authorization, query, 'token');
    request.viewedCamera = await this.viewers.authorize(params.appId, params.cameraId, credential, request.ip);
    return true;
  }
}

/** A camera viewer route: no key needed, the viewer's credential is checked by `CameraViewerGuard`. */
export const CameraViewerAccess = () => applyDecorators(Public(), UseGuards(CameraViewerGuard));

/** The camera `CameraViewerGuard` let the request watch. */
export const ViewedCamera = createParamDecorator((_data: unknown, context: ExecutionContext): Camera => {
  const camera = context.switchToHttp().getRequest<ViewerRequest>().viewedCamera;
  if (!camera) throw new Error('ViewedCamera needs CameraViewerAccess on the route');
  return camera;
});
