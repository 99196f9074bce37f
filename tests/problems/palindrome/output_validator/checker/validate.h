// Kattis output validator helpers: exit codes and the feedback file.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <string>

static const int kAccept = 42;
static const int kWrongAnswer = 43;

[[noreturn]] inline void verdict(int code, const std::string &feedback_dir, const std::string &msg)
{
	std::string path = feedback_dir + "judgemessage.txt";
	if (FILE *f = std::fopen(path.c_str(), "w")) {
		std::fputs(msg.c_str(), f);
		std::fclose(f);
	}
	std::exit(code);
}
