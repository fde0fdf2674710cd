# python3 compressing and decompressing with zlib: an interpreter's deep stacks above a C library.
import zlib

data = b"".join(str(i).encode() * (i % 13 + 1) for i in range(60000))
total = 0
for _ in range(24):
    packed = zlib.compress(data, 6)
    total += len(zlib.decompress(packed))
print(total)
