// Event types, local time and timestamps live in FetchCastCore (no I/O, embeddable); every
// user of the trace format sees them through this module too.
@_exported import FetchCastCore
