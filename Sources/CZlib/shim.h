#ifndef FETCHCAST_CZLIB_SHIM_H
#define FETCHCAST_CZLIB_SHIM_H
#include <zlib.h>

/// inflateInit2 and deflateInit2 are C macros (they pass the library version and struct size),
/// which Swift cannot call: these wrappers are plain functions.
static inline int fetchcast_inflateInit2(z_streamp strm, int windowBits) {
    return inflateInit2(strm, windowBits);
}
static inline int fetchcast_deflateInit2(z_streamp strm, int level, int windowBits) {
    return deflateInit2(strm, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}
#endif
