# a large elementwise kernel over 2^18 elements gets THREAD and UPCAST opts
from tinygrad import Tensor
x = (Tensor.arange(262144) % 7).float().clone("CPU").realize()
y = (x * 2 + 1).sum()
RESULT = y.item()
print(RESULT)
