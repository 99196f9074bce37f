// validate input answer feedback_dir < output: accepts a palindrome of N
// letters a/b, where N is the input.
#include <fstream>
#include <iostream>
#include <string>

#include "validate.h"

int main(int argc, char **argv)
{
	if (argc < 4)
		return 1;
	std::ifstream in(argv[1]);
	long n = -1;
	if (!(in >> n) || n < 1)
		return 1;
	std::string dir = argv[3], s, extra;
	if (!(std::cin >> s))
		verdict(kWrongAnswer, dir, "no output");
	if (std::cin >> extra)
		verdict(kWrongAnswer, dir, "more than one word");
	if ((long)s.size() != n)
		verdict(kWrongAnswer, dir, "wrong length");
	for (size_t i = 0; i < s.size(); i++) {
		if (s[i] != 'a' && s[i] != 'b')
			verdict(kWrongAnswer, dir, "a letter other than a or b");
		if (s[i] != s[s.size() - 1 - i])
			verdict(kWrongAnswer, dir, "not a palindrome");
	}
	verdict(kAccept, dir, "ok");
}
