/* SHA-1, for one thing only: the Sec-WebSocket-Accept value of a
 * WebSocket handshake (RFC 6455 section 4.2.2), which the protocol fixes to
 * SHA-1. libsodium has none and OpenSSL is not a dependency. Never use it
 * for anything that needs a secure hash. Pure. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#define FE_SHA1_LEN 20

/* out = SHA-1(data[0..len)) (FIPS 180-4). */
void fe_sha1(const void *data, size_t len, uint8_t out[FE_SHA1_LEN]);
