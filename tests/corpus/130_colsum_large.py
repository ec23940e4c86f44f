# column sums of 512x512, and a sum over 100 (reduce > 32: unroll 4 when divisible)
from tinygrad import Tensor
x = (Tensor.arange(512 * 512) % 11).reshape(512, 512).float().clone("CPU").realize()
y = (Tensor.arange(300) % 7).reshape(3, 100).float().clone("CPU").realize()
RESULT = {"cols": x.sum(axis=0).tolist()[:5], "rows100": y.sum(axis=1).tolist()}
print(RESULT)
