# A pad over three axes read under a WHERE per axis: every read of data1 must be gated by all three axes'
# validity (INTERP fails on a read outside the buffer). The reference gives -365.0.
from tinygrad import Tensor
t = Tensor([i % 3 == 0 for i in range(256)]).reshape(8, 8, 4).float().contiguous()
p = t.pad(((2, 1), (2, 2), (2, 0)), value=-2.0)
out = (p >= Tensor([0.0, -1.5, 1.75, 0.0, 1.5, -0.25])).float() + 0.5 * p
print(out.permute(0, 2, 1).sum().item())
# the same pads read elementwise, and pads with negative (shrinking) sides
print(p.sum(axis=(1, 2)).tolist())
q = Tensor.arange(24).reshape(2, 3, 4).float().pad(((1, 1), (0, 2), (3, 1)), value=0.5)
print(q.shrink(((0, 4), (1, 5), (2, 8))).sum(axis=2).tolist())
