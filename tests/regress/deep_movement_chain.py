# timeout: 300
# 20,000 reshape/permute views of one tensor (exponential bound computations and a stack overflow once)
from tinygrad import Tensor
x = Tensor.arange(6).reshape(2, 3).float()
for i in range(20000): x = x.reshape(3, 2) if i % 2 == 0 else x.permute(1, 0)
print(x.tolist())
