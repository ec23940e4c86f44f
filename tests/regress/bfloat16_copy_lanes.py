# a bfloat16 permute copied into a new buffer: four bf16 lanes stored side by side, which LLVM 16's SLP vectorizer
# could not cost on a CPU with AVX512-BF16 (the process died of a stack overflow compiling the kernel); then exp2 of
# the copy. Values by hand: the lanes are 0..159 permuted, exp2 of 0/1 is 1/2.
from tinygrad import Tensor, dtypes
t = Tensor([float(i) for i in range(160)], dtype=dtypes.bfloat16).reshape(5, 1, 4, 8).realize()
p = t.permute(0, 3, 1, 2).contiguous().realize()
print(p[0, :2].tolist())
print(p[4, 7].tolist())
b = Tensor([False, True] * 80).reshape(5, 1, 4, 8).cast(dtypes.bfloat16).realize()
print(b.permute(0, 3, 1, 2).contiguous().exp2()[0, :3].tolist())
