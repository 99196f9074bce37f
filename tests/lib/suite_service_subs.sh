# The instructor-suite submissions that test_suites_api judges through the
# service, checking each one's verdict, score and that no hidden test file
# shows: every pytest folder (the forged and the hidden-file readers among
# them), two of JUnit's and two of GoogleTest's (a JVM per test is slow).
# test_judge_fixtures leaves them to it in make test (tests/run.sh sets
# GAVEL_FIXTURES_SKIP_SUITE_SERVICE=1): the judge is the same code, and
# JUnit's alone cost 80 s a run.
# shellcheck shell=bash
SUITE_SERVICE_SUBS=(tests/problems/suite_pytest/submissions/*/*
	tests/problems/suite_junit5/submissions/accepted/all_pass_scores_4
	tests/problems/suite_junit5/submissions/time_limit_exceeded/loop_in_one_scores_3
	tests/problems/suite_gtest/submissions/accepted/all_pass_scores_4
	tests/problems/suite_gtest/submissions/wrong_answer/some_pass_scores_1)
