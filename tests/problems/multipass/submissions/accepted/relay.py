# Every leg in Python: the sum, then twice the number given, then one more.
import sys

words = sys.stdin.read().split()
if words[0] == "second":
    print(2 * int(words[1]))
elif words[0] == "third":
    print(int(words[1]) + 1)
else:
    n = int(words[1])
    print(sum(int(w) for w in words[2:2 + n]))
