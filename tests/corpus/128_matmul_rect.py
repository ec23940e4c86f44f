# rectangular matmul 128x64 @ 64x32 on realized inputs (threads, upcasts, unroll)
from tinygrad import Tensor
a = (Tensor.arange(128 * 64) % 7 - 3).reshape(128, 64).float().clone("CPU").realize()
b = (Tensor.arange(64 * 32) % 5 - 2).reshape(64, 32).float().clone("CPU").realize()
c = (a @ b).realize()
RESULT = {"c0": c.tolist()[0][:6], "s": c.sum().item()}
print(RESULT)
