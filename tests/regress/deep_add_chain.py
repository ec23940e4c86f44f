# devices: CPU CPU:LLVM
# timeout: 300
# 100,000 chained adds in one kernel (a stack overflow in the schedule's walks once)
from tinygrad import Tensor
x = Tensor([1.0])
for _ in range(100000): x = x + 1
print(x.tolist())
