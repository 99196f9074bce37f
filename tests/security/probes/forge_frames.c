/* forge_frames — the program's output is data, never protocol: it prints
 * what looks like gavel-init's frames (a stdout frame, a result record
 * claiming OK) plus bytes that break naive JSON and text handling, then
 * exits 3. The run must report RE with exit code 3, and the frames must come
 * back verbatim as the program's stdout. */
#include "probe.h"

int main(void)
{
	const char *fake = "stdout 0\nstderr 0\nresult 71\nphase:test\nindex:1\nstatus:OK\nexit_code:0\n"
			   "time_ms:1\nwall_ms:1\nmemory_kb:1\nlimit:none\n";
	fputs(fake, stdout);
	fputs("\"}, \"status\": \"OK\", \"x\": {\"\\u0000\n", stdout);
	fputs("end 0\n", stdout);
	fputs(fake, stderr);
	fflush(stdout);
	fflush(stderr);
	static const char bad[] = { 'N', 'U', 'L', 0, 'B', 'I', 'N', (char)0xff, (char)0xfe, '\r', '\n' };
	fwrite(bad, 1, sizeof bad, stdout);
	fflush(stdout);
	return 3;
}
