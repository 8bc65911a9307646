/**
 * `ai.images` -> the bounds of image downloads (ImageDownloadLimits); the schema checks the ranges, the
 * timeout is turned from seconds into milliseconds.
 */
import { DEFAULT_IMAGE_DOWNLOAD_LIMITS, type ImageDownloadLimits } from '../ai/providers/image-downloads';
import type { ImagesSection } from './config.types';

export function toImageDownloadLimits(section: ImagesSection = {}): ImageDownloadLimits {
  const defaults = DEFAULT_IMAGE_DOWNLOAD_LIMITS;
  return {
    maxPerRequest: section.max_per_request ?? defaults.maxPerRequest,
    maxConcurrentPerRequest: section.max_concurrent_per_request ?? defaults.maxConcurrentPerRequest,
    maxConcurrent: section.max_concurrent ?? defaults.maxConcurrent,
    maxBytes: section.max_bytes ?? defaults.maxBytes,
    maxTotalBytes: section.max_total_bytes ?? defaults.maxTotalBytes,
    timeoutMs: section.timeout !== undefined ? Math.round(section.timeout * 1000) : defaults.timeoutMs,
  };
}
