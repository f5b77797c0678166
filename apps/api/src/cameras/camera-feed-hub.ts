import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { CameraCloseReason } from '@tally/contracts';
import { CameraUsage, type MeteredCamera } from './camera-usage.js';
import { CameraViewerPresence } from './camera-viewer-presence.js';

/** The camera's live connection, as the hub closes it (a newer connection took over, the camera was deleted). */
export type IngestHandle = Readonly<{ close(reason: CameraCloseReason, message: string): void }>;

/** A viewer's end: offered every frame (it may skip), ended when the camera goes away. */
export type FrameViewer = Readonly<{ offer(frame: Buffer): void; end(): void }>;

export type LatestFrame = Readonly<{ frame: Buffer; at: Date }>;

type Feed = { latest?: LatestFrame; ingest?: IngestHandle; viewers: Set<FrameViewer> };

/**
 * The latest frame of every camera connected to this API process, and its viewers here. A frame is
 * one Buffer, kept until the next one replaces it and handed by reference to every viewer.
 */
@Injectable()
export class CameraFeedHub implements OnModuleDestroy {
  private readonly feeds = new Map<string, Feed>();

  constructor(
    private readonly viewerPresence: CameraViewerPresence,
    private readonly usage: CameraUsage,
  ) {}

  /**
   * Registers the camera's connection (metered as camera minutes until it detaches); an earlier one
   * is closed as replaced. Returns the detach function, which says whether this connection was still
   * the camera's current one.
   */
  attachIngest(camera: MeteredCamera, handle: IngestHandle): () => boolean {
    const cameraId = camera.id;
    const feed = this.feed(cameraId);
    const previous = feed.ingest;
    feed.ingest = handle;
    previous?.close('replaced', 'a newer connection took over this camera');
    const metered = this.usage.opened('camera', camera);
    return () => {
      metered();
      const current = feed.ingest === handle;
      if (current) delete feed.ingest;
      this.forgetIfIdle(cameraId, feed);
      return current;
    };
  }

  publish(cameraId: string, frame: Buffer, at: Date): void {
    const feed = this.feed(cameraId);
    feed.latest = { frame, at };
    for (const viewer of feed.viewers) viewer.offer(frame);
  }

  latest(cameraId: string): LatestFrame | undefined {
    return this.feeds.get(cameraId)?.latest;
  }

  /**
   * Adds a viewer, who gets the latest frame at once when there is one, and is counted among the
   * camera's viewers on every replica and metered as camera-viewer minutes. Returns the unsubscribe
   * function.
   */
  subscribe(camera: MeteredCamera, viewer: FrameViewer): () => void {
    const cameraId = camera.id;
    const feed = this.feed(cameraId);
    feed.viewers.add(viewer);
    const leave = this.viewerPresence.joined(cameraId);
    const metered = this.usage.opened('camera_viewer', camera);
    if (feed.latest) viewer.offer(feed.latest.frame);
    return () => {
      metered();
      leave();
      feed.viewers.delete(viewer);
      this.forgetIfIdle(cameraId, feed);
    };
  }

  viewerCount(cameraId: string): number {
    return this.feeds.get(cameraId)?.viewers.size ?? 0;
  }

  /** The camera was deleted: its connection and viewers end, its frame is forgotten. */
  remove(cameraId: string): void {
    const feed = this.feeds.get(cameraId);
    if (!feed) return;
    this.feeds.delete(cameraId);
    feed.ingest?.close('deleted', 'the camera was deleted');
    for (const viewer of feed.viewers) viewer.end();
  }

  onModuleDestroy(): void {
    for (const feed of this.feeds.values()) for (const viewer of feed.viewers) viewer.end();
    this.feeds.clear();
  }

  private feed(cameraId: string): Feed {
    let feed = this.feeds.get(cameraId);
    if (!feed) {
      feed = { viewers: new Set() };
      this.feeds.set(cameraId, feed);
    }
    return feed;
  }

  /** Keeps the last frame while the camera is connected or watched; drops the entry once neither is true. */
  private forgetIfIdle(cameraId: string, feed: Feed): void {
    if (!feed.ingest && feed.viewers.size === 0 && this.feeds.get(cameraId) === feed) this.feeds.delete(cameraId);
  }
}
