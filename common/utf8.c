/* UTF-8 validation (utf8.h), after RFC 3629's table of well-formed byte
 * sequences: the second byte's range depends on the first. */
#include "common/utf8.h"

bool gv_utf8_valid(const uint8_t *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint8_t c = p[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t need;
		uint8_t lo = 0x80, hi = 0xbf; /* range of the second byte */
		if (c >= 0xc2 && c <= 0xdf) {
			need = 1;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2;
			if (c == 0xe0)
				lo = 0xa0; /* overlong */
			else if (c == 0xed)
				hi = 0x9f; /* surrogates */
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3;
			if (c == 0xf0)
				lo = 0x90; /* overlong */
			else if (c == 0xf4)
				hi = 0x8f; /* above U+10FFFF */
		} else {
			return false;
		}
		if (n - i - 1 < need)
			return false;
		if (p[i + 1] < lo || p[i + 1] > hi)
			return false;
		for (size_t k = 2; k <= need; k++)
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
		i += need + 1;
	}
	return true;
}
