// validate input answer feedback_dir < output: accepts a palindrome of N
// letters a/b, where N is the input.
#include <cstdio>
#include <cstring>

#include "validate.h"

static char word[1 << 20];

int main(int argc, char **argv)
{
	if (argc < 4)
		return 1;
	std::FILE *in = std::fopen(argv[1], "r");
	long n = -1;
	if (!in || std::fscanf(in, "%ld", &n) != 1 || n < 1 || n >= (long)sizeof(word))
		return 1;
	const char *dir = argv[3];
	if (std::scanf("%1048575s", word) != 1)
		verdict(kWrongAnswer, dir, "no output");
	char extra[2];
	if (std::scanf("%1s", extra) == 1)
		verdict(kWrongAnswer, dir, "more than one word");
	long len = (long)std::strlen(word);
	if (len != n)
		verdict(kWrongAnswer, dir, "wrong length");
	for (long i = 0; i < len; i++) {
		if (word[i] != 'a' && word[i] != 'b')
			verdict(kWrongAnswer, dir, "a letter other than a or b");
		if (word[i] != word[len - 1 - i])
			verdict(kWrongAnswer, dir, "not a palindrome");
	}
	verdict(kAccept, dir, "ok");
}
