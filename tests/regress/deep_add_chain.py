# devices: CPU CPU:LLVM
# timeout: 300
# 30,000 chained adds in one kernel (a stack overflow in the schedule's walks past 15,000 once; the 100,000 chain
# runs too, in 31 s here)
from tinygrad import Tensor
x = Tensor([1.0])
for _ in range(30000): x = x + 1
print(x.tolist())
