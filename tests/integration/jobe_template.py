# A CodeRunner-style question template (what tests/integration/jobe_client.py
# sends as a Jobe run's source): it writes a student's C answer and a
# Python module into the working directory, compiles the C with gcc and
# lints the Python with pylint, each by subprocess. (Running what gcc
# built is not possible: the program's seccomp policy has no chmod, so the
# linker cannot mark its output executable; docs/USING.md says so.)
import os
import subprocess

NL = chr(10)
C_ANSWER = ['#include <stdio.h>',
            'int main(void) { int a, b; if (scanf("%d %d", &a, &b) != 2) return 1; printf("%d%c", a + b, 10); return 0; }']
with open('answer.c', 'w') as f:
    f.write(NL.join(C_ANSWER) + NL)
cc = subprocess.run(['/usr/bin/gcc', '-std=c99', '-Wall', '-o', 'answer', 'answer.c'], capture_output=True, text=True)
print('gcc', cc.returncode, cc.stderr.strip()[:200])
print('built', os.path.isfile('answer'))
STUDENT = ['"""A module."""', '', '', 'def add(first, second):', '    """Adds."""', '    return first + second']
with open('student.py', 'w') as f:
    f.write(NL.join(STUDENT) + NL)
lint = subprocess.run(['/usr/bin/pylint', '--score=n', 'student.py'], capture_output=True, text=True)
print('pylint', lint.returncode, lint.stdout.strip()[:200], lint.stderr.strip()[:300])
