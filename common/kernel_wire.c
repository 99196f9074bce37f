/* Kernel ids and v1 message layout (common/kernel_wire.h). */
#include "common/kernel_wire.h"

static bool hex_lower(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

bool gv_kernel_id_valid(const char *s)
{
	if (!s)
		return false;
	for (size_t i = 0; i < GV_KERNEL_ID_LEN; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? s[i] != '-' : !hex_lower(s[i]))
			return false; /* also stops at a NUL */
	}
	return s[GV_KERNEL_ID_LEN] == '\0';
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

bool gv_kernel_v1_channel(const uint8_t *p, size_t n, size_t *ch_off, size_t *ch_len)
{
	if (n < 8)
		return false;
	uint64_t k = le64(p);
	if (k < 2 || k > GV_KERNEL_V1_PARTS_MAX)
		return false;
	/* k <= 1024: 8*(k+1) cannot overflow. */
	uint64_t table = 8 * (k + 1);
	if (table > n)
		return false;
	uint64_t prev = 0;
	for (uint64_t i = 0; i < k; i++) {
		uint64_t off = le64(p + 8 * (i + 1));
		if ((i == 0 ? off != table : off < prev) || off > n)
			return false;
		prev = off;
	}
	if (prev != n)
		return false;
	uint64_t c0 = le64(p + 8), c1 = le64(p + 16);
	*ch_off = (size_t)c0;
	*ch_len = (size_t)(c1 - c0);
	return true;
}
