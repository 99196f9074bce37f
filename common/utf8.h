/* UTF-8 validation of bytes that may hold NUL: what RFC 6455 asks of a
 * WebSocket text message, checked by the frontend (clients) and the
 * executor (a kernel's output) (common/json.h's check refuses NUL, which JSON
 * text never needs but a WebSocket message may carry). Pure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* p[0..n) is well-formed UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF). */
bool gv_utf8_valid(const uint8_t *p, size_t n);
