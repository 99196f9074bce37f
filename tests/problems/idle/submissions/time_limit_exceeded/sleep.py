# Sleeps 3 s under a 1 s time limit, then answers right: TLE.
import time

n = int(input())
time.sleep(3)
print(n + 1)
