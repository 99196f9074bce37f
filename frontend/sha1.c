/* SHA-1 as FIPS 180-4 section 6.1 states it, one message at a time: the
 * handshake hashes some 60 bytes, so there is no streaming interface. */
#include "frontend/sha1.h"

#include <string.h>

static uint32_t rol(uint32_t x, unsigned n)
{
	return (x << n) | (x >> (32 - n));
}

static void block(uint32_t h[5], const uint8_t p[64])
{
	uint32_t w[80];
	for (int t = 0; t < 16; t++)
		w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 | (uint32_t)p[4 * t + 2] << 8 |
		       (uint32_t)p[4 * t + 3];
	for (int t = 16; t < 80; t++)
		w[t] = rol(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
	for (int t = 0; t < 80; t++) {
		uint32_t f, k;
		if (t < 20) {
			f = (b & c) | (~b & d);
			k = 0x5a827999u;
		} else if (t < 40) {
			f = b ^ c ^ d;
			k = 0x6ed9eba1u;
		} else if (t < 60) {
			f = (b & c) | (b & d) | (c & d);
			k = 0x8f1bbcdcu;
		} else {
			f = b ^ c ^ d;
			k = 0xca62c1d6u;
		}
		uint32_t tmp = rol(a, 5) + f + e + k + w[t];
		e = d;
		d = c;
		c = rol(b, 30);
		b = a;
		a = tmp;
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
	h[4] += e;
}

void fe_sha1(const void *data, size_t len, uint8_t out[FE_SHA1_LEN])
{
	uint32_t h[5] = { 0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0xc3d2e1f0u };
	const uint8_t *p = data;
	size_t left = len;
	while (left >= 64) {
		block(h, p);
		p += 64;
		left -= 64;
	}
	/* The tail, the 0x80 byte, zeros and the length in bits (64-bit
	 * big-endian): one block, or two when the tail leaves no room. */
	uint8_t tail[128];
	memset(tail, 0, sizeof(tail));
	if (left)
		memcpy(tail, p, left);
	tail[left] = 0x80;
	size_t n = left + 1 + 8 <= 64 ? 64 : 128;
	uint64_t bits = (uint64_t)len * 8;
	for (int i = 0; i < 8; i++)
		tail[n - 1 - i] = (uint8_t)(bits >> (8 * i));
	block(h, tail);
	if (n == 128)
		block(h, tail + 64);
	for (int i = 0; i < 5; i++) {
		out[4 * i] = (uint8_t)(h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(h[i] >> 8);
		out[4 * i + 3] = (uint8_t)h[i];
	}
}
