/** Injection token of the configured DocumentBounds. */
export const DOCUMENT_BOUNDS = Symbol('tollgate:document-bounds');
