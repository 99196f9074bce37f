/* What the frontend and the executor both check of a notebook kernel's
 * messages (executor/kernels/README.md): kernel ids and the layout of a
 * v1.kernel.websocket.jupyter.org message. Pure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GV_KERNEL_ID_LEN 36        /* a lower-case UUID, 8-4-4-4-12 */
#define GV_KERNEL_V1_PARTS_MAX 1024

/* s is a kernel id: a lower-case UUID (8-4-4-4-12 hex digits). */
bool gv_kernel_id_valid(const char *s);

/* A v1 message: u64 little-endian offset count k (2..GV_KERNEL_V1_PARTS_MAX),
 * k offsets, the first 8*(k+1), none decreasing, the last the message's
 * length. true with the channel (the first part) as p[*ch_off..+*ch_len). */
bool gv_kernel_v1_channel(const uint8_t *p, size_t n, size_t *ch_off, size_t *ch_len);
