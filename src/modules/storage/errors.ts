/** Storage error catalogue (docs/wire-compatibility.md §6). Messages are the ones urBackend clients know. */
import { AppError, defineErrors, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../lib/errors.js';

export const StorageErrors = defineErrors('storage', {
  upload_request_invalid: { status: 400, message: 'filename, contentType, and size are required.' },
  upload_confirm_invalid: { status: 400, message: 'filePath and size are required.' },
  file_path_required: { status: 400, message: 'File path is required.' },
  file_too_large: { status: 413, message: 'File size exceeds limit.' },
  storage_limit_exceeded: { status: 403, message: 'Internal storage limit exceeded.' },
  access_denied: { status: 403, message: 'Access denied.' },
  file_not_found: { status: 404, message: 'File not found.' },
  upload_not_ready: { status: 409, message: 'Uploaded file is not visible yet. Please retry confirmation.' },
  size_mismatch: { status: 400, message: 'Declared file size does not match uploaded file size.' },
  upload_already_confirmed: { status: 409, message: 'This upload is already confirmed; request a new upload URL.' },
  signed_url_invalid: { status: 403, message: 'The upload URL signature is invalid.' },
  signed_url_expired: { status: 403, message: 'The upload URL has expired.' },
  upload_length_mismatch: { status: 400, message: 'Content-Length must equal the size declared for this upload URL.' },
  upload_type_mismatch: { status: 400, message: 'Content-Type must equal the type declared for this upload URL.' },
  upload_incomplete: { status: 400, message: 'The upload ended before the declared size was received.' },
  range_not_satisfiable: { status: 416, message: 'Requested range not satisfiable.' },
  bucket_config_invalid: { status: 400, message: 'bucket, region, accessKeyId and secretAccessKey are required.' },
  upload_length_required: { status: 400, message: 'Upload-Length is required: a resumable upload declares its size when it is created.' },
  upload_metadata_invalid: { status: 400, message: 'Upload-Metadata: filename and filetype must be short text without control characters.' },
  tus_resumable_required: { status: 412, message: 'Send Tus-Resumable: 1.0.0, the version of the tus protocol this server speaks.' },
  upload_offset_conflict: { status: 409, message: "Upload-Offset does not match the upload's offset: ask with HEAD and resume from there." },
  upload_gone: { status: 410, message: 'This resumable upload has expired or was removed.' },
  resumable_request_invalid: { status: 400, message: 'This tus request is not valid.', passthrough: true },
  resumable_unavailable: { status: 409, message: 'This project stores files in its own bucket: use upload-request for it; resumable uploads go to platform storage.' },
  file_type_not_allowed: { status: 415, message: 'This type of file is not accepted by this project.' },
  file_settings_invalid: { status: 400, message: 'Invalid file settings.' },
  file_private: { status: 403, message: 'This file is private: use a signed download URL.' },
  download_url_invalid: { status: 403, message: 'The download URL signature is invalid.' },
  download_url_expired: { status: 403, message: 'The download URL has expired.' },
  transform_invalid: { status: 400, message: 'Invalid image transformation parameters.' },
  image_not_supported: { status: 415, message: 'Only JPEG, PNG, WebP, GIF, AVIF and TIFF images can be transformed.' },
  image_too_large: { status: 422, message: 'The image is too large to transform.' },
  transform_busy: { status: 503, message: 'Too many image transformations in progress. Please retry shortly.' },
  storage_unavailable: { status: 503, message: 'The storage backend could not be reached. Please retry shortly.' },
  storage_failed: { status: 502, message: 'The storage backend failed.' },
});

/** 503 with Retry-After: the store did not answer (refused, timed out, 5xx); retrying later may work. */
export function storageUnreachable(): AppError {
  return StorageErrors.storage_unavailable(undefined, undefined, { headers: { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) } });
}
