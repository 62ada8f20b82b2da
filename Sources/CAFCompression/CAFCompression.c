#include "CAFCompression.h"

#include <brotli/decode.h>
#include <limits.h>
#include <stdlib.h>
#include <zlib.h>
#include <zstd.h>

struct cafdec {
    cafdec_kind kind;
    int ended;        // the stream's (zstd: the last frame's) end was seen
    // deflate: the stream's first two bytes, held until both have arrived,
    // because they tell a zlib stream from raw deflate (see deflate_lead).
    uint8_t lead[2];
    size_t lead_len;  // how many of them have arrived
    size_t lead_fed;  // how many of them zlib has taken
    int format_known; // deflate: the lead decided zlib or raw
    z_stream z;
    BrotliDecoderState *brotli;
    ZSTD_DStream *zstd;
};

cafdec *cafdec_new(cafdec_kind kind) {
    cafdec *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->kind = kind;
    int ok = 0;
    switch (kind) {
    case CAFDEC_GZIP:
        // 32: accept a zlib header too, as servers mislabel.
        ok = inflateInit2(&d->z, MAX_WBITS + 32) == Z_OK;
        break;
    case CAFDEC_DEFLATE:
        ok = inflateInit2(&d->z, MAX_WBITS) == Z_OK;
        break;
    case CAFDEC_BROTLI:
        d->brotli = BrotliDecoderCreateInstance(NULL, NULL, NULL);
        ok = d->brotli != NULL;
        break;
    case CAFDEC_ZSTD:
        d->zstd = ZSTD_createDStream();
        ok = d->zstd != NULL && !ZSTD_isError(ZSTD_initDStream(d->zstd))
            && !ZSTD_isError(ZSTD_DCtx_setParameter(d->zstd, ZSTD_d_windowLogMax, 23));
        break;
    }
    if (!ok) {
        cafdec_free(d);
        return NULL;
    }
    return d;
}

// One inflate call over `in`, with cafdec_step's contract. After the end of
// a gzip member another may follow; after the end of a deflate stream nothing.
static int inflate_some(cafdec *d, const uint8_t *in, size_t in_len, size_t *in_used,
                        uint8_t *out, size_t out_cap, size_t *out_len) {
    *in_used = 0;
    *out_len = 0;
    if (d->ended) {
        if (in_len == 0) return 0;
        // A gzip body may be several members one after another (RFC 1952 §2.2).
        if (d->kind != CAFDEC_GZIP || inflateReset(&d->z) != Z_OK) return -1;
        d->ended = 0;
    }
    uInt in_avail = in_len > UINT_MAX ? UINT_MAX : (uInt)in_len;
    uInt out_avail = out_cap > UINT_MAX ? UINT_MAX : (uInt)out_cap;
    d->z.next_in = (Bytef *)in;
    d->z.avail_in = in_avail;
    d->z.next_out = out;
    d->z.avail_out = out_avail;
    int result = inflate(&d->z, Z_NO_FLUSH);
    *in_used = in_avail - d->z.avail_in;
    *out_len = out_avail - d->z.avail_out;
    switch (result) {
    case Z_OK:
    case Z_BUF_ERROR: // no progress possible: needs input or room
        return 0;
    case Z_STREAM_END:
        d->ended = 1;
        return 0;
    default:
        return -1;
    }
}

// Whether two bytes open a zlib stream (RFC 1950 §2.2): method 8 with a
// window of at most 32 KiB, and a header that is a multiple of 31.
static int is_zlib_header(const uint8_t lead[2]) {
    return (lead[0] & 0x0F) == 8 && (lead[0] >> 4) <= 7 && ((lead[0] << 8) | lead[1]) % 31 == 0;
}

// "deflate" is meant to be a zlib stream, but some servers send raw deflate.
// The first two bytes tell which, so they are held until both have arrived:
// deciding on whatever the first delivery holds (one byte, say) would make
// the outcome depend on how the network cut the body.
static int deflate_lead(cafdec *d, const uint8_t *in, size_t in_len, size_t *taken) {
    *taken = 0;
    while (d->lead_len < 2 && *taken < in_len) d->lead[d->lead_len++] = in[(*taken)++];
    if (d->lead_len < 2) return 0;
    if (!is_zlib_header(d->lead) && inflateReset2(&d->z, -MAX_WBITS) != Z_OK) return -1;
    d->format_known = 1;
    return 0;
}

static int zlib_step(cafdec *d, const uint8_t *in, size_t in_len, size_t *in_used,
                     uint8_t *out, size_t out_cap, size_t *out_len) {
    size_t taken = 0;
    if (d->kind == CAFDEC_DEFLATE && !d->format_known) {
        if (deflate_lead(d, in, in_len, &taken) != 0) return -1;
        *in_used = taken;
        if (!d->format_known) return 0;
    }
    if (d->lead_fed < d->lead_len) {
        // The held bytes go to zlib before anything after them.
        size_t fed = 0;
        int result = inflate_some(d, d->lead + d->lead_fed, d->lead_len - d->lead_fed, &fed, out, out_cap, out_len);
        d->lead_fed += fed;
        *in_used = taken;
        if (result != 0 || *out_len > 0 || d->lead_fed < d->lead_len) return result;
    }
    const uint8_t *rest = in ? in + taken : in;
    int result = inflate_some(d, rest, in_len - taken, in_used, out, out_cap, out_len);
    *in_used += taken;
    return result;
}

static int brotli_step(cafdec *d, const uint8_t *in, size_t in_len, size_t *in_used,
                       uint8_t *out, size_t out_cap, size_t *out_len) {
    if (d->ended) return in_len == 0 ? 0 : -1;
    size_t in_avail = in_len, out_avail = out_cap;
    const uint8_t *next_in = in;
    uint8_t *next_out = out;
    BrotliDecoderResult result = BrotliDecoderDecompressStream(d->brotli, &in_avail, &next_in, &out_avail, &next_out, NULL);
    *in_used = in_len - in_avail;
    *out_len = out_cap - out_avail;
    if (result == BROTLI_DECODER_RESULT_ERROR) return -1;
    if (result == BROTLI_DECODER_RESULT_SUCCESS) d->ended = 1;
    return 0;
}

static int zstd_step(cafdec *d, const uint8_t *in, size_t in_len, size_t *in_used,
                     uint8_t *out, size_t out_cap, size_t *out_len) {
    ZSTD_inBuffer input = { in, in_len, 0 };
    ZSTD_outBuffer output = { out, out_cap, 0 };
    size_t result = ZSTD_decompressStream(d->zstd, &output, &input);
    *in_used = input.pos;
    *out_len = output.pos;
    if (ZSTD_isError(result)) return -1;
    // 0: a frame is complete and everything it holds has been flushed.
    if (input.pos > 0 || output.pos > 0) d->ended = result == 0;
    return 0;
}

int cafdec_step(cafdec *d, const uint8_t *in, size_t in_len, size_t *in_used,
                uint8_t *out, size_t out_cap, size_t *out_len) {
    *in_used = 0;
    *out_len = 0;
    switch (d->kind) {
    case CAFDEC_GZIP:
    case CAFDEC_DEFLATE:
        return zlib_step(d, in, in_len, in_used, out, out_cap, out_len);
    case CAFDEC_BROTLI:
        return brotli_step(d, in, in_len, in_used, out, out_cap, out_len);
    case CAFDEC_ZSTD:
        return zstd_step(d, in, in_len, in_used, out, out_cap, out_len);
    }
    return -1;
}

int cafdec_finished(const cafdec *d) {
    return d->ended;
}

void cafdec_free(cafdec *d) {
    if (!d) return;
    if (d->kind == CAFDEC_GZIP || d->kind == CAFDEC_DEFLATE) inflateEnd(&d->z);
    if (d->brotli) BrotliDecoderDestroyInstance(d->brotli);
    if (d->zstd) ZSTD_freeDStream(d->zstd);
    free(d);
}
