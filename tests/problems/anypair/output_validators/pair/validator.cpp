// Kattis output validator: validator input answer feedback_dir < output.
// Accepts two non-negative integers summing to N (the input), nothing else.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

static void message(const std::string &dir, const std::string &text)
{
	std::ofstream f(dir + "/judgemessage.txt");
	f << text << "\n";
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 1;
	std::ifstream in(argv[1]);
	long long n;
	if (!(in >> n))
		return 1; // bad input file: judge error
	long long a, b;
	if (!(std::cin >> a >> b)) {
		message(argv[3], "expected two integers");
		return 43;
	}
	std::string extra;
	if (std::cin >> extra) {
		message(argv[3], "trailing output: " + extra.substr(0, 20));
		return 43;
	}
	if (a < 0 || b < 0 || a + b != n) {
		message(argv[3], std::to_string(a) + " + " + std::to_string(b) + " != " + std::to_string(n));
		return 43;
	}
	message(argv[3], "ok");
	return 42;
}
