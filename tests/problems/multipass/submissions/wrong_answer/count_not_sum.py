# Wrong from the first leg on: prints how many numbers there are.
import sys

words = sys.stdin.read().split()
print(words[1])
