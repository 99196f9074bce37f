// Kattis output validator helpers: exit codes and the feedback file. Only
// <cstdio>: a validator is compiled per import and per judging, in a sandbox.
#pragma once
#include <cstdio>
#include <cstdlib>

static const int kAccept = 42;
static const int kWrongAnswer = 43;

[[noreturn]] inline void verdict(int code, const char *feedback_dir, const char *msg)
{
	char path[4096];
	std::snprintf(path, sizeof(path), "%sjudgemessage.txt", feedback_dir);
	if (std::FILE *f = std::fopen(path, "w")) {
		std::fputs(msg, f);
		std::fclose(f);
	}
	std::exit(code);
}
