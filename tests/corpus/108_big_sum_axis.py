# a reduce over 128x512 along the long axis (unroll 4, no split) and a column sum
from tinygrad import Tensor
x = (Tensor.arange(128 * 512) % 5).reshape(128, 512).float().clone("CPU").realize()
RESULT = {"rows": x.sum(axis=1).tolist()[:8], "cols": x.sum(axis=0).tolist()[:8]}
print(RESULT)
