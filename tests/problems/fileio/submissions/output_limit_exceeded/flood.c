/* Fills output.txt past the 1 MiB output limit. */
#include <stdio.h>
#include <string.h>

int main(void)
{
	FILE *out = fopen("output.txt", "w");
	if (!out)
		return 1;
	char line[1024];
	memset(line, '7', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\n';
	for (int i = 0; i < 4096; i++)
		fwrite(line, 1, sizeof(line), out);
	return fclose(out) != 0;
}
