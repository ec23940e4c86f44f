# max over the middle axis of 8x64x16 with keepdim, subtracted (broadcast back)
from tinygrad import Tensor
x = (Tensor.arange(8 * 64 * 16) % 23).reshape(8, 64, 16).float().clone("CPU").realize()
y = (x - x.max(axis=1, keepdim=True)).sum()
RESULT = y.item()
print(RESULT)
