/* Byte encodings used by the log formats: standard padded base64 (RFC 4648 §4: keys,
 * signatures, leaves and the root in checkpoints) and lower-case hex (hashes, key ids). The
 * decoders are strict — no whitespace, no missing padding, no stray bits — because these
 * strings are compared and signed as they are. */
#ifndef CAPLEDGER_CORE_CODEC_H
#define CAPLEDGER_CORE_CODEC_H

#include <stddef.h>
#include <stdint.h>

/* Length of the padded base64 text of n bytes, without the NUL. */
#define CODEC_B64_LEN(n) ((((n) + 2) / 3) * 4)

/* Base64 of bin[0..n) into out, which needs CODEC_B64_LEN(n) + 1 bytes. Returns out. */
char *codec_b64_encode(const uint8_t *bin, size_t n, char *out, size_t out_size);
/* Malloc'd base64 of bin[0..n); NULL when memory runs out. The caller frees it. */
char *codec_b64_encode_new(const uint8_t *bin, size_t n) __attribute__((warn_unused_result));
/* Decodes all of text[0..len) into out (at most cap bytes). Returns the byte count, or -1 when
 * the text is not canonical padded base64 or does not fit. */
long codec_b64_decode(const char *text, size_t len, uint8_t *out, size_t cap)
    __attribute__((warn_unused_result));

/* Lower-case hex of bin[0..n) into out, which needs 2n + 1 bytes. Returns out. */
char *codec_hex_encode(const uint8_t *bin, size_t n, char *out);
/* Decodes exactly 2·n lower-case hex digits from text (NUL-terminated) into out[0..n).
 * Returns 0, or -1 when text is not that. */
int codec_hex_decode_exact(const char *text, uint8_t *out, size_t n)
    __attribute__((warn_unused_result));
/* Decodes the 2·n lower-case hex digits at the start of text (which may go on) into
 * out[0..n). Returns 0, or -1 when they are not that (text ending early included). */
int codec_hex_decode_span(const char *text, uint8_t *out, size_t n)
    __attribute__((warn_unused_result));

#endif
