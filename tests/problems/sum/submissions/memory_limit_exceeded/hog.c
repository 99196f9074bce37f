#include <stdlib.h>
#include <string.h>

/* Touches memory in 64 MiB steps, keeping every block reachable, until
 * something stops it. */
struct block {
	struct block *prev;
	char fill[64u << 20];
};

struct block *volatile head;

int main(void)
{
	for (;;) {
		struct block *b = malloc(sizeof(*b));
		if (!b)
			return 1;
		memset(b->fill, 1, sizeof(b->fill));
		b->prev = head;
		head = b;
	}
}
