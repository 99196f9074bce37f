// A minimal checker in the testlib protocol (written for Gavel; not
// testlib.h): checker input output answer. Verdict by exit code (0 ok,
// 1 wrong answer, 2 presentation error, 3 checker failure), message on stderr.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

enum { OK = 0, WA = 1, PE = 2, FAIL = 3 };

static int quit(int code, const std::string &msg)
{
	static const char *const names[] = { "ok", "wrong answer", "wrong output format", "FAIL" };
	std::cerr << names[code] << " " << msg << "\n";
	return code;
}

static bool read_int(std::istream &s, long long &v, bool &garbage)
{
	std::string tok;
	garbage = false;
	if (!(s >> tok))
		return false;
	size_t pos = 0;
	try {
		v = std::stoll(tok, &pos);
	} catch (...) {
		garbage = true;
		return false;
	}
	garbage = pos != tok.size();
	return !garbage;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return quit(FAIL, "usage: checker input output answer");
	std::ifstream out(argv[2]), ans(argv[3]);
	long long want, got;
	bool garbage;
	if (!read_int(ans, want, garbage))
		return quit(FAIL, "bad answer file");
	if (!read_int(out, got, garbage))
		return quit(PE, garbage ? "expected an integer" : "no output");
	if (got != want)
		return quit(WA, "expected " + std::to_string(want) + ", found " + std::to_string(got));
	return quit(OK, "answer is " + std::to_string(got));
}
