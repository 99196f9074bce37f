# mem_bomb (Python) — grows a list of 1 MiB buffers without end. The memory
# limit must stop it: MLE (the driver also accepts RE from a MemoryError,
# provided the reported peak stays near the limit). Capped at 8 GiB.
import sys

chunks = []
for mb in range(8192):
    chunks.append(bytearray(b"\x01" * (1 << 20)))
    if mb % 64 == 0:
        print(mb, "MiB", file=sys.stderr, flush=True)
print("ESCAPED allocated 8 GiB: no memory limit", flush=True)
