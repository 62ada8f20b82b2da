#ifndef CAFCOMPRESSION_H
#define CAFCOMPRESSION_H

#include <stddef.h>
#include <stdint.h>

// Why this target exists: the library undoes a response's content codings
// itself, one bounded step at a time, instead of letting libcurl expand a
// whole network read at once. zlib's initialisers are macros Swift cannot
// call, and one opaque decoder keeps three libraries' stream structs (zlib,
// brotli, zstd) out of Swift.

/// The content codings the library decodes (RFC 9110 §8.4.1).
typedef enum {
    CAFDEC_GZIP = 1,    ///< gzip / x-gzip; concatenated members are one body
    CAFDEC_DEFLATE = 2, ///< "deflate": zlib format, or raw deflate as some servers send it
    CAFDEC_BROTLI = 3,  ///< br (RFC 7932)
    CAFDEC_ZSTD = 4,    ///< zstd (RFC 8878), window limited to 8 MiB as RFC 9659 allows
} cafdec_kind;

typedef struct cafdec cafdec;

/// A new decoder, or NULL when memory is short.
cafdec *cafdec_new(cafdec_kind kind);

/// Decodes from `in` into `out`: sets how much input was used and how much
/// output was produced. Returns 0, or -1 for data that is not valid in this
/// coding (also data after the end of a stream that cannot continue). A call
/// that produced nothing and used nothing means the decoder needs more input.
int cafdec_step(cafdec *decoder, const uint8_t *in, size_t in_len, size_t *in_used,
                uint8_t *out, size_t out_cap, size_t *out_len);

/// Whether the data so far ends a complete stream (for zstd: a complete
/// frame); 0 while more is expected.
int cafdec_finished(const cafdec *decoder);

void cafdec_free(cafdec *decoder);

#endif
