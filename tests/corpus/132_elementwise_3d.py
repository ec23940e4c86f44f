# elementwise on a 16x32x8 with a permuted operand
from tinygrad import Tensor
a = (Tensor.arange(16 * 32 * 8) % 13).reshape(16, 32, 8).float().clone("CPU").realize()
b = (Tensor.arange(8 * 32 * 16) % 5).reshape(8, 32, 16).float().clone("CPU").realize()
y = (a * b.permute(2, 1, 0) + 1).realize()
RESULT = y.sum().item()
print(RESULT)
